import CurlewOperations
import CurlewTransport
import HTTPTypes
import Synchronization
import Tracing

/// One request of a manager while something observes it — a monitor (the manager's logging and
/// metrics included) or a tracer: the transport its attempts run on, which reports each attempt's
/// events to the monitors and the span, and the request's own events (adapted, retrying, finished).
///
/// The manager makes one per request only when something observes; otherwise its requests go
/// straight to its transport and nothing of this runs. Both dialects use it: the async path passes it
/// to each attempt, an operation gets it as its transport (the seam sees the attempts wherever they
/// come from).
///
/// Safety: `@unchecked Sendable` because `span`, `attempts` and `isFinished` are read and written
/// only with `lock` held; everything else is immutable.
final class InstrumentedTransport: TransferRunning, @unchecked Sendable {
    let request: MonitoredRequest
    let monitor: (any EventMonitor)?
    let base: any TransferRunning
    /// `base` when it is an engine, whose transfers also report their response heads.
    private let engine: TransferEngine?
    private let tracer: (any Tracer)?
    /// Where the span is started: the trace context of the task that made the request.
    private let parent: InstrumentationContext?
    private let lock = PThreadMutex()
    @exclusivity(unchecked) private var span: RequestSpan?
    @exclusivity(unchecked) private var attempts = 0
    @exclusivity(unchecked) private var isFinished = false

    init(_ request: MonitoredRequest, monitor: (any EventMonitor)?, tracer: (any Tracer)?, base: any TransferRunning,
         engine: TransferEngine?) {
        self.request = request
        self.monitor = monitor
        self.tracer = tracer
        self.parent = tracer == nil ? nil : InstrumentationContext.current
        self.base = base
        self.engine = engine
    }

    deinit {
        self.lock.deallocate()
    }

    // MARK: The request's events

    /// Starts the span now rather than with the first attempt (the async dialect, whose requests always
    /// finish; an operation that is never started would leave its span open).
    func startSpan() {
        self.lock.withLock { self.startSpanLocked() }
    }

    /// The interceptor made `adapted` for attempt `attempt`.
    func adapted(_ adapted: HTTPRequest, attempt: Int) {
        self.monitor?.request(self.request, didAdapt: adapted, attempt: attempt)
    }

    /// The request will be sent again after `wait`.
    func retrying(after wait: Duration, because reason: RetryReason) {
        let span = self.lock.withLock { self.span }
        span?.retrying(after: wait, because: reason)
        self.monitor?.request(self.request, willRetryAfter: wait, because: reason)
    }

    /// The request is over; only the first call counts.
    func finish(_ result: Result<TransferResponse, any Error>) {
        let ending = self.lock.withLock { () -> (span: RequestSpan?, attempts: Int)? in
            guard !self.isFinished else { return nil }
            self.isFinished = true
            defer { self.span = nil }
            return (self.span, self.attempts)
        }
        guard let ending else { return }
        ending.span?.end(with: result, attempts: ending.attempts)
        self.monitor?.request(self.request, didFinishWith: result)
    }

    private func startSpanLocked() {
        guard self.span == nil, let tracer = self.tracer else { return }
        self.span = RequestSpan(tracer: tracer, head: self.request.head, context: self.parent ?? .topLevel)
    }

    // MARK: TransferRunning

    /// A transfer for the next attempt, with the span's trace context in its header fields.
    func makeTransfer(_ request: TransferRequest, observer: any TransferObserver) -> any TransferControl {
        var request = request
        let number = self.lock.withLock { () -> Int in
            self.attempts += 1
            if let tracer = self.tracer {
                self.startSpanLocked()
                self.span?.inject(into: &request.head.headerFields, with: tracer)
            }
            return self.attempts
        }
        let transfer = InstrumentedTransfer(RequestAttempt(number: number, head: request.head), observer: observer, transport: self)
        if let engine = self.engine {
            transfer.base = engine.makeTransfer(request, delegate: transfer)
        } else {
            transfer.base = self.base.makeTransfer(request, observer: transfer)
        }
        return transfer
    }

    /// The base transport's: an operation's hand-offs wait for the events the engine has in hand.
    func afterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        self.base.afterCurrentEvents(work)
    }

    // MARK: An attempt's events

    fileprivate func started(_ attempt: RequestAttempt) {
        self.monitor?.request(self.request, didStart: attempt)
    }

    fileprivate func received(_ head: HTTPResponse, in attempt: RequestAttempt) {
        if self.tracer != nil { self.lock.withLock { self.span?.received(head) } }
        self.monitor?.request(self.request, didReceive: head, in: attempt)
    }

    fileprivate func updated(_ progress: TransferProgress, in attempt: RequestAttempt) {
        self.monitor?.request(self.request, didUpdate: progress, in: attempt)
    }

    fileprivate func completed(_ attempt: RequestAttempt, with result: Result<TransferResponse, TransferError>, after duration: Duration?) {
        if self.tracer != nil {
            let span = self.lock.withLock { self.span }
            span?.completed(attempt, with: result, after: duration)
        }
        self.monitor?.request(self.request, didComplete: attempt, with: result, after: duration)
    }
}

/// One attempt's transfer, seen by its request's monitors and span: its controls, forwarded (the
/// first `start()` reports the start), and its events, forwarded once the monitors have heard them —
/// so that a request's metrics and logs are recorded before its caller sees the outcome.
///
/// From the engine it hears the transfer as its delegate, response head included; from another
/// transport as its observer, and reports the head with the completion.
///
/// `start()` is called by an operation under its lock (see `RequestOperation+Lifecycle.swift`): what
/// runs there — the monitors' start event — must be short and never call back into the operation.
///
/// Safety: `@unchecked Sendable` because `base` is set once, by the transport that makes it, before
/// it is handed to anyone; `startedAt` is written once, by the `start()` that wins `hasStarted`,
/// before the base transfer starts, and read by its completion, which the transport delivers after
/// that start; `headReported` is written and read by the transfer's events, which never overlap.
private final class InstrumentedTransfer: TransferControl, TransferObserver, TransferDelegate, @unchecked Sendable {
    let attempt: RequestAttempt
    let observer: any TransferObserver
    let transport: InstrumentedTransport
    @exclusivity(unchecked) var base: (any TransferControl)?
    private let hasStarted = Atomic<Bool>(false)
    @exclusivity(unchecked) private var startedAt: ContinuousClock.Instant?
    @exclusivity(unchecked) private var headReported = false

    init(_ attempt: RequestAttempt, observer: any TransferObserver, transport: InstrumentedTransport) {
        self.attempt = attempt
        self.observer = observer
        self.transport = transport
    }

    // MARK: TransferControl

    func start() {
        if !self.hasStarted.exchange(true, ordering: .relaxed) {
            self.startedAt = .now
            self.transport.started(self.attempt)
        }
        self.base?.start()
    }

    func cancel() { self.base?.cancel() }
    func pause() { self.base?.pause() }
    func resume() { self.base?.resume() }

    // MARK: TransferDelegate (the engine's transfers)

    func transfer(_ transfer: Transfer, didReceive response: HTTPResponse) {
        self.headReported = true
        self.transport.received(response, in: self.attempt)
    }

    func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) {
        self.transferDidUpdate(progress)
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.transferDidComplete(with: result)
    }

    // MARK: TransferObserver (any other transport's)

    func transferDidUpdate(_ progress: TransferProgress) {
        self.transport.updated(progress, in: self.attempt)
        self.observer.transferDidUpdate(progress)
    }

    func transferDidComplete(with result: Result<TransferResponse, TransferError>) {
        if !self.headReported, case .success(let response) = result {
            self.transport.received(response.head, in: self.attempt)
        }
        let elapsed = self.startedAt.map { ContinuousClock.now - $0 }
        self.transport.completed(self.attempt, with: result, after: elapsed)
        self.observer.transferDidComplete(with: result)
    }
}
