import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import HTTPTypes
import Testing

/// LESSONS.md 8–15: AFURLConnectionOperation's asynchronous operation, as `RequestOperation`.
@Suite("Lessons: the operation")
struct OperationLessons {
    /// Lesson 8. `start` must return before the work is done, because the callbacks come from the
    /// network context. Started *on* that context, an asynchronous operation returns at once (it
    /// cannot have finished: its callbacks need the context it is still occupying) and completes
    /// afterwards. A synchronous operation — `main()` starts a transfer and blocks until it ends —
    /// run on the same context waits for callbacks that can only run when it returns: a deadlock,
    /// here bounded by a one-second timeout. Each backend configuration gets a context of its own,
    /// so the block stalls nobody else.
    @Test("8: start returns at once; a synchronous operation on the context deadlocks", arguments: BackendConfiguration.allCases)
    func asynchronousStart(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeScheduler(in: LessonContext.contexts))
        let route = Route.bytes(1_000)
        let url = try server().url(route)

        let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
        #expect(operation.isAsynchronous, "what Foundation is told: start() returns before the work is done")
        let afterStart = Locked<(executing: Bool, finished: Bool)?>(nil)
        engine.scheduler.perform {
            operation.start()
            afterStart.set((operation.isExecuting, operation.isFinished))
        }
        let object = try await bounded { try await operation.responseObject() }
        #expect(afterStart.value?.executing == true, "start() returned with the operation executing")
        #expect(afterStart.value?.finished == false, "start() returned before the work was done")
        #expect(object as? Data == Data(try #require(route.expectedBody)))

        let synchronous = SynchronousFetchOperation(engine: engine, url: url, timeout: .seconds(1))
        engine.scheduler.perform { synchronous.start() }  // Foundation's start(): main() on this thread
        #expect(await waitUntil { synchronous.isFinished })
        #expect(synchronous.outcome.value == .timedOut, "the blocked context delivered the callbacks anyway?")
        // Nothing was lost, only blocked: once main() gave the context back, the transfer completed.
        #expect(await waitUntil { synchronous.completedLater.value })
        await engine.shutdown()
    }

    /// Lesson 9. No queue is needed: `start()` by hand, then `waitUntilFinished()`, from a plain
    /// thread (never from Swift's cooperative threads: that wait blocks).
    @Test("9: works without a queue: start, then waitUntilFinished", arguments: BackendConfiguration.allCases)
    func withoutQueue(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let operation = RequestOperation(request: TransferRequest(url: try server().url(.bytes(2_000))), engine: engine)
        let seen = Locked<(finished: Bool, bytes: Int?)?>(nil)
        Thread {
            operation.start()
            operation.waitUntilFinished()
            seen.set((operation.isFinished, operation.responseData?.count))
        }.start()
        #expect(await waitUntil { seen.value != nil })
        #expect(seen.value?.finished == true)
        #expect(seen.value?.bytes == 2_000)
        await engine.shutdown()
    }

    /// Lesson 10. `start`: a ready operation becomes executing at once and its transfer is started
    /// on the network context (here held, so nothing can complete yet); a did-start notification
    /// follows. A cancelled operation, started, finishes with the cancellation error instead, and
    /// never starts a transfer.
    @Test("10: start: executing, the transfer on the context, then did-start; cancelled: finished", arguments: BackendConfiguration.allCases)
    func start(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let url = try server().url(.bytes(10))
        let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
        let notes = NotificationLog(operation)
        let gate = await ContextGate.hold(engine)
        operation.start()
        #expect(operation.isExecuting && !operation.isFinished)
        #expect(await waitUntil { notes.names.value == [RequestOperation.didStartNotification] })
        #expect(!operation.isFinished, "nothing completes while the context is held")
        gate.release()
        _ = try await bounded { try await operation.responseObject() }
        #expect(await waitUntil { notes.names.value.last == RequestOperation.didFinishNotification })

        let cancelled = RequestOperation(request: TransferRequest(url: url), engine: engine)
        let cancelledNotes = NotificationLog(cancelled)
        cancelled.cancel()
        cancelled.start()
        #expect(cancelled.isFinished)
        #expect((cancelled.error as? TransferError)?.isCancellation(of: url) == true)
        #expect(await waitUntil { cancelledNotes.names.value == [RequestOperation.didFinishNotification] })
        #expect(await engine.diagnostics().transfersCompleted == 1, "only the first operation made a transfer")
        await engine.shutdown()
    }

    /// Lesson 11. `cancel`: only an unfinished, not yet cancelled operation reacts. Executing: the
    /// transfer is cancelled on the context and the operation fails with a cancellation error
    /// carrying the failing URL. The race — cancel before the transfer exists on the context — is
    /// shown with the context held: start and cancel are both still queued there, run in order,
    /// and the operation finishes once. Cancelling twice, or after the finish, changes nothing.
    ///
    /// The operation reports the cancellation error whenever it was cancelled before it finished,
    /// so that error alone proves nothing about the transfer. Here the server would answer only
    /// after two minutes (and the requests have no idle timeout): the operations finish in time only
    /// because their transfers were cancelled, and the engine (nothing live) and the server (the
    /// request abandoned by the client, or never sent) confirm it.
    @Test("11: cancel: a cancellation error with the URL, exactly one finish, also in the race", arguments: BackendConfiguration.allCases)
    func cancel(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let server = try testServer()
        let tag = UUID().uuidString
        var request = TransferRequest(url: server.url(.delay(120_000))).tagged(tag)
        request.options.idleTimeout = nil
        let url = request.url
        let running = RequestOperation(request: request, engine: engine)
        let runningFinishes = FinishCounter(running)
        running.start()
        #expect(await waitUntil { server.requests(tagged: tag).count == 1 }, "the request never reached the server")
        running.cancel()
        running.cancel()
        try #require(await waitUntil { running.isFinished }, "the operation did not finish: its transfer was not cancelled")
        #expect((running.error as? TransferError)?.isCancellation(of: url) == true)
        #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned },
                "the server still holds the request: \(server.requests(tagged: tag))")

        let racedTag = UUID().uuidString
        let raced = RequestOperation(request: request.tagged(racedTag), engine: engine)
        let racedFinishes = FinishCounter(raced)
        let gate = await ContextGate.hold(engine)
        raced.start()
        raced.cancel()
        #expect(!raced.isFinished, "the cancel goes through the context, like the start")
        gate.release()
        #expect(await waitUntil { raced.isFinished }, "the raced operation did not finish: its transfer was not cancelled")
        #expect((raced.error as? TransferError)?.code == .cancelled)
        #expect(await waitUntil { await engine.diagnostics().liveTransfers == 0 })
        #expect(server.requests(tagged: racedTag).allSatisfy { $0.outcome != .answered })

        let done = RequestOperation(request: TransferRequest(url: server.url(.bytes(10))), engine: engine)
        done.start()
        _ = try await bounded { try await done.responseObject() }
        done.cancel()
        #expect(!done.isCancelled && done.error == nil)

        #expect(await waitUntil { runningFinishes.finishes == 1 && racedFinishes.finishes == 1 })
        // A barrier before counting: a later operation on the same engine, run to its end.
        let barrier = RequestOperation(request: TransferRequest(url: server.url(.bytes(1))), engine: engine)
        let barrierFinishes = FinishCounter(barrier)
        barrier.start()
        _ = try await bounded { try await barrier.responseObject() }
        #expect(await waitUntil { barrierFinishes.finishes == 1 })
        #expect(runningFinishes.finishes == 1 && racedFinishes.finishes == 1, "a second finish")
        await engine.shutdown()
    }

    /// Lesson 12. `pause` acts only on an executing operation: the transfer stops on the context
    /// (its connection released, its body kept), a notification is posted, the state is paused.
    /// `resume` acts only on a paused one; the body then continues with a `Range` + `If-Range`
    /// request and arrives byte-identical.
    ///
    /// The server sends the first 60,000 bytes at once and holds the last byte until the client
    /// leaves (`holdFirst`, for the first request of the tag only), so the pause — issued from the
    /// progress handler, a hop away from the context — lands mid-body however late it comes: one
    /// attempt, no retries, no timing. The server's record of the two requests shows the
    /// pause (the first one abandoned by the client) and the resume (`Range: bytes=N-` with the
    /// entity's ETag in `If-Range`, answered 206).
    @Test("12: pause only when executing, resume only when paused; same bytes, by Range", arguments: BackendConfiguration.allCases)
    func pauseAndResume(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let route = Route.entity(bytes: 60_001, dripChunkSize: 60_000, dripIntervalMilliseconds: 100, holdFirst: true)
        let server = try testServer()
        let tag = UUID().uuidString
        let operation = RequestOperation(request: TransferRequest(url: server.url(route)).tagged(tag), engine: engine)
        let notes = NotificationLog(operation)
        operation.pause()
        #expect(!operation.isPaused, "a ready operation does not pause")
        operation.progressQueue = DispatchQueue(label: "lesson12.progress")
        operation.downloadProgressHandler = { [weak operation] progress in
            if progress.bytesReceived > 0 { operation?.pause() }
        }
        operation.start()
        #expect(await waitUntil { notes.names.value.contains(RequestOperation.didPauseNotification) || operation.isFinished })
        #expect(operation.isPaused && !operation.isExecuting && !operation.isFinished, "paused: neither executing nor finished")
        #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned },
                "the paused transfer still holds its connection")
        operation.downloadProgressHandler = nil
        operation.resume()
        operation.resume()  // not paused any more: ignored
        let object = try await bounded { try await operation.responseObject() }
        #expect(object as? Data == Data(try #require(route.expectedBody)))
        #expect(operation.response?.metrics.resumeCount == 1)
        let requests = server.requests(tagged: tag)
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.first?.range == nil)
        let resumed = try #require(requests.last)
        #expect(resumed.range?.hasPrefix("bytes=") == true && resumed.range != "bytes=0-", "\(resumed)")
        #expect(resumed.ifRange == route.entityETag)
        #expect(resumed.status == 206)
        await engine.shutdown()
    }

    /// Lesson 13. `finish`: the state is finished before anyone is told; the `isFinished` change
    /// makes the queue run the `completionBlock` and start the dependants; the did-finish
    /// notification follows. Each of them sees `isFinished` already true.
    @Test("13: finish: isFinished first, then completionBlock, dependants and did-finish", arguments: BackendConfiguration.allCases)
    func finish(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let operation = RequestOperation(request: TransferRequest(url: try server().url(.bytes(10))), engine: engine)
        let sawFinished = Locked<[String: Bool]>([:])
        operation.completionBlock = { [weak operation] in
            sawFinished.withLock { $0["completionBlock"] = operation?.isFinished }
        }
        let dependant = BlockOperation { sawFinished.withLock { $0["dependant"] = operation.isFinished } }
        dependant.addDependency(operation)
        let token = NotificationCenter.default.addObserver(forName: RequestOperation.didFinishNotification,
                                                           object: nil, queue: nil) { note in
            guard note.object as? RequestOperation === operation else { return }
            sawFinished.withLock { $0["did-finish"] = operation.isFinished }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let queue = OperationQueue()
        queue.addOperation(dependant)
        queue.addOperation(operation)
        #expect(await waitUntil { sawFinished.value.count == 3 })
        #expect(sawFinished.value == ["completionBlock": true, "dependant": true, "did-finish": true])
        await engine.shutdown()
    }

    /// Lesson 14. Nothing is processed on the network context: the serializer runs on the shared
    /// processing queue; the success handler runs on the completion queue the caller chose.
    @Test("14: serialization off the network context; handlers on the chosen completion queue", arguments: BackendConfiguration.allCases)
    func processingQueue(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let operation = RequestOperation(request: TransferRequest(url: try server().url(.bytes(100))), engine: engine)
        let serializer = WhereSerializer(engine)
        operation.responseSerializer = serializer
        let completion = MarkedQueue("lesson14.completion")
        operation.completionQueue = completion.queue
        let handler = Locked<(onCompletionQueue: Bool, onContext: Bool)?>(nil)
        operation.setCompletionHandlers(success: { _, _ in
            handler.set((completion.isCurrent, engine.scheduler.isOnContext))
        }, failure: nil)
        operation.start()
        #expect(await waitUntil { handler.value != nil })
        #expect(serializer.ran.value == .some(.init(onContext: false, onProcessingQueue: true)))
        #expect(handler.value?.onCompletionQueue == true)
        #expect(handler.value?.onContext == false)
        await engine.shutdown()
    }

    /// Lesson 15. The `completionBlock`'s thread is not guaranteed; work that needs a particular
    /// context must be sent there explicitly.
    ///
    /// The first half illustrates Foundation, not Curlew: on Linux `OperationQueue` and `start()`
    /// run the `completionBlock` on a global-queue thread — neither the thread that started and
    /// waited for the operation, nor any queue of yours — and a block it sends to your queue runs
    /// there. The second half is what Curlew controls, and the explicit way to send the result where
    /// it belongs: the success handler runs on the `completionQueue` you chose.
    @Test("15: the completionBlock's thread is not yours; the handlers run on the queue you chose", arguments: BackendConfiguration.allCases)
    func completionBlockThread(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let operation = RequestOperation(request: TransferRequest(url: try server().url(.bytes(10))), engine: engine)
        let mine = MarkedQueue("lesson15.mine")
        let seen = Locked<[String: Int32]>([:])
        let onMine = Locked<(inBlock: Bool, sent: Bool?, handler: Bool?)>((false, nil, nil))
        operation.completionBlock = {
            let inBlock = mine.isCurrent
            onMine.withLock { $0.inBlock = inBlock }
            if let id = ProcessInspector.currentThreadID() { seen.withLock { $0["completionBlock"] = id } }
            mine.queue.async { onMine.withLock { $0.sent = mine.isCurrent } }
        }
        operation.completionQueue = mine.queue
        operation.setCompletionHandlers(success: { _, _ in onMine.withLock { $0.handler = mine.isCurrent } }, failure: nil)
        Thread {
            if let id = ProcessInspector.currentThreadID() { seen.withLock { $0["starter"] = id } }
            operation.start()
            operation.waitUntilFinished()
        }.start()
        #expect(await waitUntil { onMine.value.sent != nil && onMine.value.handler != nil })
        let threads = seen.value
        // Foundation's part.
        #expect(threads["completionBlock"] != nil && threads["completionBlock"] != threads["starter"])
        #expect(onMine.value.inBlock == false, "the completionBlock does not run on your queue")
        #expect(onMine.value.sent == true, "work sent to your queue runs there")
        // Curlew's part.
        #expect(onMine.value.handler == true, "the success handler runs on the completionQueue you chose")
        await engine.shutdown()
    }
}

extension BackendConfiguration {
    /// A scheduler of this configuration with a context of its own: the run-loop configurations
    /// get this suite's network threads instead of `NetworkThread.shared`. Lessons 10 and 11 hold
    /// the context and release it from async code; other suites' synchronous tests block
    /// cooperative threads while they wait for `NetworkThread.shared`, so holding that thread
    /// could leave no cooperative thread to release it.
    func makeOperationLessonScheduler() -> any TransferScheduler {
        self.makeScheduler(in: OperationLessonThreads.contexts)
    }
}

/// The network threads of the operation lessons (network threads live as long as the process).
enum OperationLessonThreads {
    static let contexts = PrivateContexts(name: "OpLessons")
}

/// The contexts lesson 8 blocks on purpose: each configuration's of its own, so nobody else waits.
enum LessonContext {
    /// Network threads for lesson 8 (network threads live as long as the process).
    static let contexts = PrivateContexts(name: "Lesson8")
}

/// A synchronous operation: `main()` starts a transfer and blocks its thread until the transfer
/// completes, or `timeout` passes.
///
/// Safety: `@unchecked Sendable` because its own state is in `Locked` boxes and the rest is
/// immutable.
final class SynchronousFetchOperation: Operation, @unchecked Sendable {
    enum Outcome: Sendable, Equatable {
        case pending, completed, timedOut
    }

    let outcome = Locked(Outcome.pending)
    let completedLater = Locked(false)
    private let engine: TransferEngine
    private let url: URL
    private let timeout: Duration

    init(engine: TransferEngine, url: URL, timeout: Duration) {
        self.engine = engine
        self.url = url
        self.timeout = timeout
    }

    override func main() {
        let done = SignallingDelegate { self.completedLater.set(true) }
        self.engine.makeTransfer(TransferRequest(url: self.url), delegate: done).start()
        let seconds = Double(self.timeout.components.seconds)
        let timedOut = done.semaphore.wait(timeout: .now() + seconds) == .timedOut
        self.outcome.set(timedOut ? .timedOut : .completed)
    }
}

/// Signals a semaphore when its transfer completes.
final class SignallingDelegate: TransferDelegate, Sendable {
    let semaphore = DispatchSemaphore(value: 0)
    private let onCompletion: @Sendable () -> Void

    init(onCompletion: @escaping @Sendable () -> Void) {
        self.onCompletion = onCompletion
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.onCompletion()
        self.semaphore.signal()
    }
}

/// The names of one operation's notifications, in order.
final class NotificationLog: Sendable {
    let names = Locked<[Notification.Name]>([])
    private let tokens: Tokens

    init(_ operation: RequestOperation) {
        let names = self.names
        let identity = ObjectIdentifier(operation)
        self.tokens = Tokens(tokens: [RequestOperation.didStartNotification, RequestOperation.didPauseNotification,
                                      RequestOperation.didFinishNotification].map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                guard let object = note.object as? RequestOperation, ObjectIdentifier(object) == identity else { return }
                names.withLock { $0.append(name) }
            }
        })
    }

    deinit {
        for token in self.tokens.tokens { NotificationCenter.default.removeObserver(token) }
    }

    /// Safety: `@unchecked Sendable` because the tokens are immutable and only handed back to
    /// `NotificationCenter.removeObserver(_:)`, which is thread-safe.
    struct Tokens: @unchecked Sendable {
        let tokens: [any NSObjectProtocol]
    }
}

/// Counts one operation's did-finish notifications.
final class FinishCounter: Sendable {
    private let log: NotificationLog

    init(_ operation: RequestOperation) {
        self.log = NotificationLog(operation)
    }

    var finishes: Int { self.log.names.value.filter { $0 == RequestOperation.didFinishNotification }.count }
}

/// Notes where it ran.
final class WhereSerializer: ResponseSerializer {
    struct Ran: Sendable, Equatable {
        var onContext: Bool
        var onProcessingQueue: Bool
    }

    private static let processingKey: DispatchSpecificKey<UInt8> = {
        let key = DispatchSpecificKey<UInt8>()
        for queue in RequestOperation.processingQueues { queue.setSpecific(key: key, value: 2) }
        return key
    }()

    let ran = Locked<Ran?>(nil)
    private let scheduler: any TransferScheduler

    init(_ engine: TransferEngine) {
        self.scheduler = engine.scheduler
        _ = Self.processingKey
    }

    func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> (any Sendable)? {
        let onProcessingQueue = DispatchQueue.getSpecific(key: Self.processingKey) != nil
        self.ran.set(Ran(onContext: self.scheduler.isOnContext, onProcessingQueue: onProcessingQueue))
        return body
    }
}
