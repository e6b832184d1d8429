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
    /// here bounded by a one-second timeout. Each backend gets a context of its own, so the block
    /// stalls nobody else.
    @Test("8: start returns at once; a synchronous operation on the context deadlocks", arguments: LessonContext.allCases)
    func asynchronousStart(_ context: LessonContext) async throws {
        let engine = TransferEngine(scheduler: context.makeScheduler())
        let route = Route.bytes(1_000)
        let url = try server().url(route)

        let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
        let afterStart = Locked<(executing: Bool, finished: Bool)?>(nil)
        engine.scheduler.perform {
            operation.start()
            afterStart.set((operation.isExecuting, operation.isFinished))
        }
        let object = try await operation.responseObject()
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
        let gate = await ContextHold.hold(engine)
        operation.start()
        #expect(operation.isExecuting && !operation.isFinished)
        #expect(await waitUntil { notes.names.value == [RequestOperation.didStartNotification] })
        #expect(!operation.isFinished, "nothing completes while the context is held")
        gate.release()
        _ = try await operation.responseObject()
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
    @Test("11: cancel: a cancellation error with the URL, exactly one finish, also in the race", arguments: BackendConfiguration.allCases)
    func cancel(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let url = try server().url(.delay(10_000))
        let running = RequestOperation(request: TransferRequest(url: url), engine: engine)
        let runningFinishes = FinishCounter(running)
        running.start()
        #expect(await waitUntil { await engine.diagnostics().liveTransfers == 1 })
        running.cancel()
        running.cancel()
        #expect(await waitUntil { running.isFinished })
        #expect((running.error as? TransferError)?.isCancellation(of: url) == true)

        let raced = RequestOperation(request: TransferRequest(url: try server().url(.bytes(10))), engine: engine)
        let racedFinishes = FinishCounter(raced)
        let gate = await ContextHold.hold(engine)
        raced.start()
        raced.cancel()
        #expect(!raced.isFinished, "the cancel goes through the context, like the start")
        gate.release()
        #expect(await waitUntil { raced.isFinished })
        #expect((raced.error as? TransferError)?.code == .cancelled)

        let done = RequestOperation(request: TransferRequest(url: try server().url(.bytes(10))), engine: engine)
        done.start()
        _ = try await done.responseObject()
        done.cancel()
        #expect(!done.isCancelled && done.error == nil)

        #expect(await waitUntil { runningFinishes.finishes == 1 && racedFinishes.finishes == 1 })
        #expect(await holdsThroughout(.milliseconds(50)) { runningFinishes.finishes == 1 && racedFinishes.finishes == 1 },
                "a second finish")
        await engine.shutdown()
    }

    /// Lesson 12. `pause` acts only on an executing operation: the transfer stops on the context
    /// (its connection released, its body kept), a notification is posted, the state is paused.
    /// `resume` acts only on a paused one; the body then continues (with a `Range` request here)
    /// and arrives byte-identical.
    @Test("12: pause only when executing, resume only when paused; same bytes", arguments: BackendConfiguration.allCases)
    func pauseAndResume(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let route = Route.entity(bytes: 120_000, dripChunkSize: 10_000, dripIntervalMilliseconds: 100)
        // The pause comes from the progress handler, a hop away from the context: on a badly
        // overloaded machine it can land after the body has arrived (the transfer then never
        // pauses and simply succeeds), so a few attempts are allowed.
        var shown = false
        for _ in 1...3 where !shown {
            let operation = RequestOperation(request: TransferRequest(url: try server().url(route)), engine: engine)
            let notes = NotificationLog(operation)
            operation.pause()
            #expect(!operation.isPaused, "a ready operation does not pause")
            operation.progressQueue = DispatchQueue(label: "lesson12.progress")
            operation.downloadProgressHandler = { [weak operation] progress in
                if progress.bytesReceived > 0 { operation?.pause() }
            }
            operation.start()
            #expect(await waitUntil { notes.names.value.contains(RequestOperation.didPauseNotification) || operation.isFinished })
            let paused = operation.isPaused && !operation.isExecuting
            operation.downloadProgressHandler = nil
            operation.resume()
            operation.resume()  // not paused any more: ignored
            let object = try await operation.responseObject()
            #expect(object as? Data == Data(try #require(route.expectedBody)))
            if operation.response?.metrics.resumeCount == 1 {
                #expect(paused, "paused: neither executing nor finished")
                shown = true
            }
        }
        #expect(shown, "three attempts to pause mid-body all came after the body had arrived")
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
        let completion = LabelledQueue("lesson14.completion")
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

    /// Lesson 15. The `completionBlock`'s thread is not guaranteed: on Linux, Foundation runs it on
    /// a global-queue thread — neither the thread that started and waited for the operation, nor
    /// any queue of yours. Work that needs a particular context must be sent there explicitly.
    @Test("15: the completionBlock's thread is not yours; send work where it belongs", arguments: BackendConfiguration.allCases)
    func completionBlockThread(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let operation = RequestOperation(request: TransferRequest(url: try server().url(.bytes(10))), engine: engine)
        let mine = LabelledQueue("lesson15.mine")
        let seen = Locked<[String: Int32]>([:])
        let onMine = Locked<(inBlock: Bool, sent: Bool?)>((false, nil))
        operation.completionBlock = {
            let inBlock = mine.isCurrent
            onMine.withLock { $0.inBlock = inBlock }
            if let id = ProcessInspector.currentThreadID() { seen.withLock { $0["completionBlock"] = id } }
            mine.queue.async { onMine.withLock { $0.sent = mine.isCurrent } }
        }
        Thread {
            if let id = ProcessInspector.currentThreadID() { seen.withLock { $0["starter"] = id } }
            operation.start()
            operation.waitUntilFinished()
        }.start()
        #expect(await waitUntil { onMine.value.sent != nil })
        let threads = seen.value
        #expect(threads["completionBlock"] != nil && threads["completionBlock"] != threads["starter"])
        #expect(onMine.value.inBlock == false, "the completionBlock does not run on your queue")
        #expect(onMine.value.sent == true, "work sent to your queue runs there")
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
        switch self {
        case .dispatch:
            return DispatchScheduler(label: "operation-lessons")
        case .runLoopCFSocket:
            return RunLoopScheduler(thread: OperationLessonThreads.cfSocket, sockets: .cfSocket)
        case .runLoopEpoll:
            return RunLoopScheduler(thread: OperationLessonThreads.epoll, sockets: .epollSource)
        }
    }
}

/// The network threads of the operation lessons (network threads live as long as the process).
enum OperationLessonThreads {
    static let cfSocket = NetworkThread(name: "OpLessons.cf")
    static let epoll = NetworkThread(name: "OpLessons.epoll")
}

/// The contexts lesson 8 blocks on purpose: each of its own, so nobody else waits.
enum LessonContext: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case dispatchQueue = "dispatch"
    case networkThread = "runloop-epoll"

    func makeScheduler() -> any TransferScheduler {
        switch self {
        case .dispatchQueue:
            return DispatchScheduler(label: "Lesson8")
        case .networkThread:
            return RunLoopScheduler(thread: Self.lessonThread, sockets: .epollSource)
        }
    }

    /// One network thread for lesson 8 (network threads live as long as the process).
    private static let lessonThread = NetworkThread(name: "Lesson8")

    var testDescription: String { self.rawValue }
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

/// Holds an engine's context until released, so nothing completes meanwhile.
final class ContextHold: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = Locked(false)
    private let released = Locked(false)

    static func hold(_ engine: TransferEngine) async -> ContextHold {
        let hold = ContextHold()
        engine.scheduler.perform {
            hold.entered.set(true)
            _ = hold.semaphore.wait(timeout: .now() + 30)
        }
        #expect(await waitUntil { hold.entered.value })
        return hold
    }

    func release() {
        let first = self.released.withLock { released -> Bool in
            defer { released = true }
            return !released
        }
        if first { self.semaphore.signal() }
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

/// A queue that knows when code runs on it.
final class LabelledQueue: Sendable {
    let queue: DispatchQueue
    private let key = DispatchSpecificKey<UInt8>()

    init(_ label: String) {
        self.queue = DispatchQueue(label: label)
        self.queue.setSpecific(key: self.key, value: 1)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: self.key) != nil }
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

extension TransferError {
    /// Whether this is a cancellation carrying `url`.
    func isCancellation(of url: URL?) -> Bool {
        self.code == .cancelled && self.failingURL == url
    }
}
