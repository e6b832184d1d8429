// <DESC>
// One request traced through each backend (claims 4, 10, 13, 14 and 15 of Docs/Lessons.md): which
// thread ran each callback, in order. Transfer callbacks run on the backend's context — the
// dispatch backend's serial queue (on whichever pool thread it got) or the one network thread —
// and nothing else does: the response is serialized on a processing queue, the success handler
// runs on the completion queue you chose, the completionBlock on a global-queue thread. While the
// request waits for its reply, the network thread sleeps.
// </DESC>
import Curlew
import ExampleSupport
import Foundation

/// One line of the trace.
struct Event: Sendable {
    var what: String
    var thread: String
    var onContext: Bool
}

let trace = Shared<[Event]>([])
let processingKey = DispatchSpecificKey<UInt8>()
for queue in RequestOperation.processingQueues { queue.setSpecific(key: processingKey, value: 1) }
let completionKey = DispatchSpecificKey<UInt8>()
let completionQueue = DispatchQueue(label: "example.completion")
completionQueue.setSpecific(key: completionKey, value: 1)

/// Where the calling code runs, for the trace.
func where_(_ scheduler: any TransferScheduler) -> (thread: String, onContext: Bool) {
    (ThreadNames.current(), scheduler.isOnContext)
}

/// Adds an event to the trace.
func note(_ what: String, _ scheduler: any TransferScheduler) {
    let here = where_(scheduler)
    trace.withLock { $0.append(Event(what: what, thread: here.thread, onContext: here.onContext)) }
}

/// The engine with every transfer event noted on the way to the operation.
final class TracingTransport: TransferRunning {
    let engine: TransferEngine
    init(engine: TransferEngine) { self.engine = engine }

    func makeTransfer(_ request: TransferRequest, observer: any TransferObserver) -> any TransferControl {
        self.engine.makeTransfer(request, observer: TracingObserver(observer: observer, scheduler: self.engine.scheduler))
    }
}

/// Notes each event, then passes it on.
final class TracingObserver: TransferObserver {
    let observer: any TransferObserver
    let scheduler: any TransferScheduler
    let progressNoted = Shared(false)

    init(observer: any TransferObserver, scheduler: any TransferScheduler) {
        self.observer = observer
        self.scheduler = scheduler
    }

    func transferDidUpdate(_ progress: TransferProgress) {
        let first = self.progressNoted.withLock { noted -> Bool in
            defer { noted = true }
            return !noted
        }
        if first {
            note("transfer: first progress (\(progress.bytesReceived) bytes)", self.scheduler)
        }
        self.observer.transferDidUpdate(progress)
    }

    func transferDidComplete(with result: Result<TransferResponse, TransferError>) {
        note("transfer: completed", self.scheduler)
        self.observer.transferDidComplete(with: result)
    }
}

/// The default serializer, noting where it ran.
struct TracingSerializer: ResponseSerializer {
    let scheduler: any TransferScheduler
    let onProcessingQueue = Shared<Bool?>(nil)

    func serialize(response: HTTPResponse, body: Data?, url: URL?) -> Data? {
        self.onProcessingQueue.set(DispatchQueue.getSpecific(key: processingKey) != nil)
        note("response serializer", self.scheduler)
        return body
    }
}

for backend in ExampleBackend.allCases {
    let scheduler = backend.makeScheduler(thread: "Trace.\(backend == .runLoopEpoll ? "epoll" : "cfsocket")")
    let engine = TransferEngine(scheduler: scheduler)
    trace.set([])
    Report.section("\(backend.rawValue): GET /bytes/200000, started by hand on the main thread")

    let operation = RequestOperation(request: TransferRequest(url: server.url(.bytes(200_000))), transport: TracingTransport(engine: engine))
    let serializer = TracingSerializer(scheduler: scheduler)
    operation.responseSerializer = serializer
    operation.completionQueue = completionQueue
    let handlerOnCompletionQueue = Shared<Bool?>(nil)
    operation.setCompletionHandlers(success: { _, _ in
        handlerOnCompletionQueue.set(DispatchQueue.getSpecific(key: completionKey) != nil)
        note("success handler (completion queue)", scheduler)
    }, failure: { _, error in
        note("failure handler: \(error)", scheduler)
    })
    let completionBlockSawFinished = Shared<Bool?>(nil)
    operation.completionBlock = { [weak operation] in
        completionBlockSawFinished.set(operation?.isFinished)
        note("completionBlock", scheduler)
    }
    let tokens = [RequestOperation.didStartNotification, RequestOperation.didFinishNotification].map { name in
        NotificationCenter.default.addObserver(forName: name, object: operation, queue: nil) { _ in
            note(name == RequestOperation.didStartNotification ? "did-start notification" : "did-finish notification", scheduler)
        }
    }

    note("start() called", scheduler)
    operation.start()
    let returned = (executing: operation.isExecuting, finished: operation.isFinished)
    note("start() returned: isExecuting = \(returned.executing), isFinished = \(returned.finished)", scheduler)
    operation.waitUntilFinished()
    Waiting.until {
        let seen = Set(trace.value.map(\.what))
        return seen.contains("completionBlock") && seen.contains("did-finish notification")
            && seen.contains { $0.hasPrefix("success handler") || $0.hasPrefix("failure handler") }
    }
    for token in tokens { NotificationCenter.default.removeObserver(token) }

    let events = trace.value
    for event in events {
        Report.say("\(event.what.padding(toLength: 58, withPad: " ", startingAt: 0)) \(event.thread)\(event.onContext ? "  [context]" : "")")
    }
    let transferEvents = events.filter { $0.what.hasPrefix("transfer:") }
    let others = events.filter { !$0.what.hasPrefix("transfer:") }
    let contextThreads = Set(transferEvents.map(\.thread))
    let index = { (what: String) in events.firstIndex { $0.what.hasPrefix(what) } ?? Int.max }

    if let thread = (scheduler as? RunLoopScheduler)?.thread {
        Report.check(4, contextThreads == [thread.name] && transferEvents.allSatisfy(\.onContext),
                     "every transfer callback ran on the one network thread, \(thread.name)")
    } else {
        Report.check(4, transferEvents.allSatisfy(\.onContext) && !contextThreads.contains("main"),
                     "every transfer callback ran on the dispatch backend's serial queue, on a pool thread: no thread of its own")
        Report.say("(A pool thread may run the context's queue, then a processing queue: the context is the queue, not a thread.)")
    }
    Report.check(10, returned.executing && !returned.finished && index("did-start") < index("did-finish"),
                 "start() made the operation executing and returned at once, the transfer started on the context, did-start was posted")
    Report.check(13, completionBlockSawFinished.value == true && index("completionBlock") > index("transfer: completed")
                 && index("did-finish") > index("transfer: completed"),
                 "the finish came once the transfer completed: the completionBlock saw isFinished, did-finish followed")
    Report.check(14, serializer.onProcessingQueue.value == true && handlerOnCompletionQueue.value == true
                 && !others.contains { $0.onContext },
                 "nothing but the transfer ran on the context: serializing on a processing queue, the handler on the chosen completion queue")
    if backend == .dispatch {
        Report.linux("Foundation runs the completionBlock with DispatchQueue.global().async and does not clear it afterwards"
            + " (Darwin clears it); it has no KVO: the queue hears only didChangeValue(forKey:) for isExecuting, isFinished and"
            + " isReady. Curlew's handlers and notifications default to its own queues, not the main queue, which a Linux"
            + " server or tool may never drain.")
    } else if backend == .runLoopCFSocket {
        Report.linux("CoreFoundation watches every CFSocket from one select() helper thread, so each socket event crosses"
            + " two threads before the network thread sees it; the epoll source (runloop-epoll) has no helper thread.")
    }
    let completionBlockThread = events.first { $0.what == "completionBlock" }?.thread
    Report.check(15, completionBlockThread != nil && completionBlockThread != "main",
                 "the completionBlock ran on a thread nobody chose (\(completionBlockThread ?? "none")): send work that needs a context there yourself")

    if let thread = (scheduler as? RunLoopScheduler)?.thread {
        let waiting = NotingDelegate()
        engine.makeTransfer(TransferRequest(url: server.url(.delay(1_000))), delegate: waiting).start()
        usleep(50_000)
        let before = thread.wakeUpCount
        let started = ContinuousClock.now
        waiting.wait()
        let wakeUps = thread.wakeUpCount - before
        let seconds = Double((ContinuousClock.now - started).components.seconds)
            + Double((ContinuousClock.now - started).components.attoseconds) / 1e18
        Report.say(String(format: "Waiting %.2f s for a delayed reply, the network thread woke %d time(s).", seconds, wakeUps))
        Report.check(4, Double(wakeUps) <= 20 + 10 * seconds,
                     "idle, the network thread sleeps until an event comes: a few wake-ups, not a spin")
    }
    engine.shutDownAndWait()
}
Report.finish()
