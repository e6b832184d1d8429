import CurlewSerialization
import CurlewTransport
import Dispatch
import Foundation

/// One HTTP request as an asynchronous `Operation`: AFNetworking's `AFHTTPRequestOperation`,
/// GCD-first, on Linux.
///
/// `start()` returns at once: the transfer runs on the engine's network context (the dispatch
/// scheduler's queue, or the run-loop scheduler's network thread), which delivers its callbacks.
/// Put operations on an `OperationQueue` (with `maxConcurrentOperationCount` and dependencies), or
/// start one by hand and wait for it. The response is serialized on a shared processing queue,
/// never on the network context, and the success or failure handler runs on
/// ``completionQueue`` inside ``completionGroup``.
///
/// ```swift
/// let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
/// operation.setCompletionHandlers(success: { operation, object in
///     print("got", (object as? Data)?.count ?? 0, "bytes")
/// }, failure: { operation, error in
///     print("failed:", error)
/// })
/// queue.addOperation(operation)
/// // or: let object = try await operation.responseObject() after starting it
/// ```
///
/// Control follows AFURLConnectionOperation: ``cancel()`` works at any moment and from any thread
/// (an operation that has not started finishes, when started, with a cancellation error; an
/// executing or paused one cancels its transfer and fails with a `TransferError` whose code is
/// `TransferError/Code/cancelled` and whose `failingURL` is the URL being fetched); ``pause()`` stops an
/// executing operation's transfer and keeps the body so far; ``resume()`` continues it with a
/// `Range` request when the server allows it, and restarts it cleanly otherwise. Whatever happens,
/// an operation finishes exactly once, and its handler runs exactly once.
///
/// Callbacks never run on the main queue unless asked to (see ``CallbackQueues``), so programs
/// whose main thread runs no loop neither deadlock nor pile up work.
///
/// Safety: `@unchecked Sendable` because every mutable property lives in `storage`, guarded by its
/// `NSLock` — the operation's one lock, never held while user code, a serializer or Foundation's
/// queue bookkeeping runs. `request` and `transport` are immutable.
public final class RequestOperation: Operation, @unchecked Sendable {
    /// The request this operation sends. Its `destination` says whether the body is collected in
    /// memory (`TransferResponse/body`) or streamed to a file (`TransferResponse/fileURL`).
    /// With an ``interceptor``, each attempt sends what it made of this request.
    ///
    /// A file destination is replaced only when the operation succeeds: the body waits in a file of
    /// the operation's beside it until the ``responseSerializer`` has accepted the response (its
    /// status, for a `ValidatingResponseSerializer`, decides whether the body is written at all;
    /// other serializers keep the request's `TransferOptions/fileReplacementStatusCodes`). On any
    /// failure — a refused status or content type, a transfer error, a cancel, a full disk — the
    /// destination is left as it was and no file of the operation's remains.
    public let request: TransferRequest

    /// What runs the transfer: a `TransferEngine` (one multi handle on one scheduler), or a stand-in
    /// such as `StubTransport` (see ``TransferRunning``).
    public let transport: any TransferRunning

    /// The engine that runs the transfer, when the ``transport`` is one.
    public var engine: TransferEngine? { self.transport as? TransferEngine }

    /// The queue this operation's response was serialized on — one of the library's shared
    /// ``processingQueues``, never the network context — or `nil` until a response was handed to
    /// one. Each response goes, once the transport has handled the events it arrived with, to the
    /// first of them not stuck in a slow block (see ``processingQueues``).
    public var processingQueue: DispatchQueue? {
        self.storage.withLock { $0.processingQueue }
    }

    /// Everything mutable, under the one lock.
    let storage: Locked<Storage>

    /// Creates an operation for `request` on `engine`; nothing happens until it is started.
    ///
    /// - Parameters:
    ///   - request: What to send, where the body goes, and the transfer options.
    ///   - engine: Runs the transfer. An engine is one multi handle on one `TransferScheduler`
    ///     (`DispatchScheduler` or `RunLoopScheduler`); operations on one engine share its
    ///     connections.
    public convenience init(request: TransferRequest, engine: TransferEngine) {
        self.init(request: request, transport: engine)
    }

    /// Creates an operation for `request` on any ``TransferRunning``; nothing happens until it is
    /// started.
    ///
    /// - Parameters:
    ///   - request: What to send, where the body goes, and the transfer options.
    ///   - transport: Runs the transfer: a `TransferEngine`, or a stand-in that keeps the contract
    ///     of ``TransferRunning`` (a stub in unit tests).
    public init(request: TransferRequest, transport: any TransferRunning) {
        self.request = request
        self.transport = transport
        self.storage = Locked(Storage(defaults: SharedQueues.defaults.value, request: request))
        super.init()
    }

    // MARK: Foundation's view

    /// `true`: `start()` returns before the work is done.
    public override var isAsynchronous: Bool { true }

    /// Whether the operation has started and not finished, and is not paused.
    public override var isExecuting: Bool {
        self.storage.withLock { $0.machine.isExecuting }
    }

    /// Whether the operation has finished (successfully, with an error, or cancelled).
    public override var isFinished: Bool {
        self.storage.withLock { $0.machine.isFinished }
    }

    /// Whether ``cancel()`` was called before the operation finished.
    public override var isCancelled: Bool {
        self.storage.withLock { $0.machine.isCancelled }
    }

    // MARK: Start and cancel (overrides must live in the class body on Linux)

    /// Starts the operation and returns at once.
    ///
    /// A ready operation becomes executing and its transfer is started on the engine's network
    /// context; ``didStartNotification`` follows on ``notificationQueue``. A cancelled operation
    /// finishes at once with the cancellation error. Anything else — dependencies not finished,
    /// already started, paused, finished — is ignored, as in AFNetworking. An `OperationQueue`
    /// calls this for you.
    public override func start() {
        let isReady = self.isReady
        let preparing = self.interceptor != nil
        self.apply { $0.start(isReady: isReady, preparing: preparing) }
    }

    /// Cancels the operation, from any thread, at any moment; only the first call does anything,
    /// and nothing happens after the operation finished.
    ///
    /// Not started yet: the operation is marked cancelled and finishes, with the cancellation
    /// error, as soon as it is started (a queue starts it promptly, dependencies or not). Executing
    /// or paused: its transfer is cancelled on the network context, and the operation fails with a
    /// `TransferError` with code `TransferError/Code/cancelled` carrying the failing URL. A
    /// cancel that arrives while the finished transfer's response is being serialized still makes
    /// the operation fail with the cancellation error: a cancel before finish always wins.
    public override func cancel() {
        self.apply { $0.cancel() }
    }

    /// Whether the operation is paused (see ``pause()``).
    public var isPaused: Bool {
        self.storage.withLock { $0.machine.isPaused }
    }

    // MARK: Results

    /// The response, once the transfer has completed successfully (any HTTP status). For a file
    /// destination its `fileURL` is the destination once the operation has succeeded, and `nil`
    /// when the operation failed (the destination was left as it was).
    public var response: TransferResponse? {
        self.storage.withLock { $0.response }
    }

    /// The body collected in memory, once the transfer has completed successfully.
    public var responseData: Data? {
        self.storage.withLock { $0.response?.body }
    }

    /// Why the operation failed: the transfer's `TransferError` (cancellation included), or the
    /// error the ``responseSerializer`` threw. `nil` until the operation finishes, and after success.
    public var error: (any Error)? {
        self.storage.withLock { state in
            if case .failure(let error) = state.result { return error }
            return nil
        }
    }

    /// What the ``responseSerializer`` made of the response; `nil` until the operation finishes
    /// successfully (and when the serializer's value was `nil`). For the value with its type, await
    /// ``responseValue(as:)``.
    public var responseObject: (any Sendable)? {
        self.storage.withLock { state in
            if case .success(let object) = state.result { return object }
            return nil
        }
    }

    // MARK: Configuration

    /// When to send the request again after a failed attempt (see `RetryPolicy`): `RetryPolicy/none`
    /// by default. Each attempt is a new transfer (a streamed body is opened again from its start);
    /// between attempts the operation waits out the backoff, still executing, and a cancel during
    /// the wait finishes it at once. Set it before starting.
    ///
    /// ```swift
    /// operation.retryPolicy = .default    // 3 attempts, idempotent methods, 408/429/502/503/504, timeouts, resets
    /// ```
    public var retryPolicy: RetryPolicy {
        get { self.storage.withLock { $0.retryPolicy } }
        set { self.storage.withLock { $0.retryPolicy = newValue } }
    }

    /// The budget the retries of ``retryPolicy`` draw on, shared with other operations (see
    /// `RetryBudget`): a retry it refuses is not made, and the operation ends with the attempt's
    /// outcome. `nil` (the default for an operation made by hand) lets every retry the policy asks
    /// for be made; a `RequestOperationManager` sets its own. Set it before starting.
    public var retryBudget: RetryBudget? {
        get { self.storage.withLock { $0.retryBudget } }
        set { self.storage.withLock { $0.retryBudget = newValue } }
    }

    /// Adapts the request before each attempt and may ask for a retry after one (see
    /// ``RequestInterceptor``); consulted before ``retryPolicy``. `nil` by default. Set it before starting.
    public var interceptor: (any RequestInterceptor)? {
        get { self.storage.withLock { $0.interceptor } }
        set { self.storage.withLock { $0.interceptor = newValue } }
    }

    /// How many attempts have started so far: 1 for an operation that never retried, 0 before the
    /// first. The response's `TransferMetrics/retryCount` is this less one.
    public var attemptCount: Int {
        self.storage.withLock { $0.attemptCount }
    }

    /// Whether the operation is waiting out the backoff before its next attempt: executing, with no
    /// transfer. For tests that act in that window.
    package var isWaitingForRetry: Bool {
        self.storage.withLock { $0.machine.state == .waiting }
    }

    /// Turns the response into ``responseObject``; runs on ``processingQueue``.
    /// The default, `DataResponseSerializer`, passes the body through (a 404 succeeds with its
    /// bytes); `HTTPResponseSerializer`, `JSONResponseSerializer`, `DecodableResponseSerializer` and
    /// the others validate the status first. Set it before starting.
    public var responseSerializer: any ResponseSerializer {
        get { self.storage.withLock { $0.responseSerializer } }
        set { self.storage.withLock { $0.responseSerializer = newValue } }
    }

    /// The queue the success and failure handlers run on. `nil` (the default) means the default
    /// completion queue of ``defaultCallbackQueues`` when the operation was created: a shared
    /// concurrent queue of the library's, not the main queue.
    ///
    /// A handler for the library's own completion queue runs on that queue for every purpose (its
    /// queue-specific values, `dispatchPrecondition`), never on the network context, and one that
    /// blocks holds up no other operation's response. Handlers for any other queue are queued there.
    /// How the library's queue runs them without a thread wake-up per request: the project's
    /// `Docs/Decisions/0021-handler-runs-on-its-lane.md`.
    public var completionQueue: DispatchQueue? {
        get { self.storage.withLock { $0.completionQueue } }
        set { self.storage.withLock { $0.completionQueue = newValue } }
    }

    /// A group entered when the operation's result starts being processed and left after its
    /// handler has run (or at once when it has none), so that `notify` on it runs after them.
    /// Set it before starting.
    public var completionGroup: DispatchGroup? {
        get { self.storage.withLock { $0.completionGroup } }
        set { self.storage.withLock { $0.completionGroup = newValue } }
    }

    /// The queue that posts ``didStartNotification``, ``didPauseNotification`` and
    /// ``didFinishNotification`` to `NotificationCenter.default`. By default a shared serial queue
    /// of the library's (see ``CallbackQueues``); keep it serial to keep one operation's
    /// notifications in order.
    public var notificationQueue: DispatchQueue {
        get { self.storage.withLock { $0.notificationQueue } }
        set { self.storage.withLock { $0.notificationQueue = newValue } }
    }

    /// The queue progress handlers run on. By default a shared queue of the library's.
    public var progressQueue: DispatchQueue {
        get { self.storage.withLock { $0.progressQueue } }
        set { self.storage.withLock { $0.progressQueue = newValue } }
    }

    /// Called with the transfer's progress when request body bytes have been sent.
    ///
    /// Deliveries are coalesced: at most one is queued or running per operation, and each sees
    /// the latest progress, so a slow handler skips values rather than falling behind. The last
    /// value is always delivered, though not necessarily before the completion handler runs.
    public var uploadProgressHandler: (@Sendable (TransferProgress) -> Void)? {
        get { self.storage.withLock { $0.uploadProgressHandler } }
        set { self.storage.withLock { $0.uploadProgressHandler = newValue } }
    }

    /// Called with the transfer's progress when response body bytes have arrived. Coalesced like
    /// ``uploadProgressHandler``.
    public var downloadProgressHandler: (@Sendable (TransferProgress) -> Void)? {
        get { self.storage.withLock { $0.downloadProgressHandler } }
        set { self.storage.withLock { $0.downloadProgressHandler = newValue } }
    }

    /// Sets the handlers that receive the result, on ``completionQueue``, exactly once.
    ///
    /// As in AFHTTPRequestOperation: `failure` runs when the transfer failed (cancellation
    /// included) or the serializer threw; otherwise `success` runs with the serialized response
    /// object. Set them before the operation finishes; they are released after they ran.
    ///
    /// ```swift
    /// operation.setCompletionHandlers(success: { operation, object in
    ///     guard let data = object as? Data else { return }
    ///     print(operation.response?.head.status ?? "", data.count)
    /// }, failure: { operation, error in
    ///     if (error as? TransferError)?.code == .cancelled { return }
    ///     print("failed:", error)
    /// })
    /// ```
    ///
    /// - Parameters:
    ///   - success: Receives the operation and its ``responseObject``.
    ///   - failure: Receives the operation and its ``error``.
    public func setCompletionHandlers(
        success: (@Sendable (RequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (RequestOperation, any Error) -> Void)?
    ) {
        self.storage.withLock { state in
            state.successHandler = success
            state.failureHandler = failure
        }
    }

    /// Where operations created from now on run their callbacks by default: ``CallbackQueues/library``
    /// unless changed. Set it to ``CallbackQueues/main`` for AFNetworking's main-queue behaviour.
    public static var defaultCallbackQueues: CallbackQueues {
        get { SharedQueues.defaults.value }
        set { SharedQueues.defaults.set(newValue) }
    }

    /// The shared queues that serialize responses (AFNetworking's concurrent
    /// `http_request_operation_processing_queue`): serial queues, one per CPU (at least four), never
    /// the network context. Serial queues always get a thread from libdispatch, so operations keep
    /// finishing even when every thread of the global pool is blocked. A slow or blocked serializer
    /// holds up only the responses that reached its queue in its first millisecond; later ones go to
    /// another queue. Keep serializers from blocking all the same: every blocked one holds a queue.
    /// How responses are spread over the queues: the project's
    /// `Docs/Decisions/0019-processing-lanes-and-callback-queues.md`.
    public static var processingQueues: [DispatchQueue] { ProcessingQueues.queues }

    /// The method, the URL and the state, for logs: `<RequestOperation GET http://…: executing>`.
    public override var description: String {
        let state = self.storage.withLock { $0.machine }
        let method = self.request.head.method.rawValue
        let url = self.request.url?.absoluteString ?? "?"
        return "<RequestOperation \(method) \(url): \(state.state)\(state.isCancelled ? ", cancelled" : "")>"
    }
}

extension RequestOperation {
    /// The operation's mutable state, guarded by `RequestOperation.storage`'s lock.
    struct Storage: Sendable {
        var machine = RequestOperation.Machine()
        /// The transfer, from start until the operation finishes.
        var transfer: (any TransferControl)?
        /// Commands for the transfer, queued in transition order, issued after unlocking.
        var transferCommands: [RequestOperation.TransferCommand] = []
        /// Whether some thread is issuing `transferCommands` now.
        var isIssuingTransferCommands = false

        var responseSerializer: any ResponseSerializer = DataResponseSerializer()
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var notificationQueue: DispatchQueue
        var progressQueue: DispatchQueue
        let defaultCompletionQueue: DispatchQueue
        var successHandler: (@Sendable (RequestOperation, (any Sendable)?) -> Void)?
        var failureHandler: (@Sendable (RequestOperation, any Error) -> Void)?
        var uploadProgressHandler: (@Sendable (TransferProgress) -> Void)?
        var downloadProgressHandler: (@Sendable (TransferProgress) -> Void)?

        /// The group entered for this operation's completion, left after its handler.
        var enteredGroup: DispatchGroup?
        /// The transfer's response, when it completed successfully.
        var response: TransferResponse?
        /// The processing queue the last response went to.
        var processingQueue: DispatchQueue?
        /// The operation's result, once finished.
        var result: Result<(any Sendable)?, any Error>?
        /// Tasks awaiting ``RequestOperation/responseObject()``, by ticket.
        var waiters: [UInt64: CheckedContinuation<(any Sendable)?, any Error>] = [:]
        var nextWaiterTicket: UInt64 = 0

        /// Progress coalescing (see `RequestOperation+Progress.swift`).
        var progress = ProgressRelay()

        var retryPolicy = RetryPolicy.none
        var retryBudget: RetryBudget?
        var interceptor: (any RequestInterceptor)?
        /// Where a body for a file waits for the operation's success (see ``DownloadStaging``), from
        /// the first attempt until the finish.
        var staging: DownloadStaging?
        /// Attempts started so far.
        var attemptCount = 0
        /// The request of the current attempt (the interceptor's adaptation of the operation's).
        var attemptRequest: TransferRequest
        /// The interceptor's task under way (adapting, or deciding about a retry), which a cancel stops.
        /// (A backoff wait needs no stopping: when it ends, a cancelled operation ignores it.)
        var pendingTask: Task<Void, Never>?

        init(defaults: CallbackQueues, request: TransferRequest) {
            self.attemptRequest = request
            self.notificationQueue = defaults.notification
            self.progressQueue = defaults.progress
            self.defaultCompletionQueue = defaults.completion
        }
    }
}
