import CurlewOperations
import CurlewTransport
import Foundation
import HTTPTypes

/// A transport that answers from an ``HTTPCache`` when it can, and otherwise runs the transfer on
/// another transport, storing what comes back.
///
/// It wraps the `TransferRunning` seam, so it serves whatever runs on it — operations, a
/// ``RequestOperationManager`` (made with `cache:`, which wraps its transport in one), or a
/// `TransferEngine` used directly:
///
/// ```swift
/// let engine = TransferEngine(scheduler: DispatchScheduler())
/// let cached = CachingTransport(base: engine, cache: HTTPCache())
/// let operation = RequestOperation(request: TransferRequest(url: url), transport: cached)
/// ```
///
/// For each request the cache takes part in (a GET of a body to memory: see ``HTTPCache``):
/// - a fresh stored response answers at once, with an `Age` field, and nothing is sent;
/// - a stale one is revalidated: the request goes out with `If-None-Match` / `If-Modified-Since`,
///   and a 304 is answered with the stored response — its status, its body, its header fields
///   updated from the 304 — so the caller never sees the 304;
/// - otherwise the request goes out as it is, and a storable response is stored.
/// `TransferMetrics/cacheOutcome` says which happened. Other requests go straight through,
/// but unsafe ones (POST, PUT, DELETE…) drop what the cache holds for their URL.
///
/// It keeps the seam's contract: lookups run on the cache's own queue, never inside `start()`; a
/// transfer completes once, cancellation at any moment included; `pause()` and `resume()` reach
/// the underlying transfer while one runs.
public final class CachingTransport: TransferRunning, Sendable {
    /// The transport that runs what the cache cannot answer.
    public let base: any TransferRunning
    /// The cache.
    public let cache: HTTPCache

    /// Creates a transport answering from `cache` in front of `base`.
    public init(base: any TransferRunning, cache: HTTPCache) {
        self.base = base
        self.cache = cache
    }

    /// A transfer that consults the cache when it starts.
    public func makeTransfer(_ request: TransferRequest, observer: any TransferObserver) -> any TransferControl {
        CachedTransfer(request: request, observer: observer, transport: self)
    }

    /// The base transport's.
    public func afterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        self.base.afterCurrentEvents(work)
    }
}

/// One transfer through a ``CachingTransport``: a lookup on the cache's queue, then a stored answer
/// or a transfer of the base transport.
private final class CachedTransfer: TransferControl, Sendable {
    /// What happens to the base transfer's outcome.
    enum Plan: Sendable {
        /// Not the cache's: delivered as it is (an unsafe method's drops stored entries first).
        case passThrough
        /// A miss: stored when storable.
        case fetch(requestTime: Date)
        /// A conditional request for this entry: a 304 makes it the answer.
        case revalidate(CachedResponse, body: Data, requestTime: Date)
    }

    enum State: Sendable {
        case idle
        /// The lookup runs on the cache's queue.
        case lookingUp(cancelled: Bool)
        /// A base transfer runs.
        case running(any TransferControl, cancelled: Bool)
        case finished
    }

    let request: TransferRequest
    /// Until the completion is delivered: then let go, since the observer usually holds this
    /// transfer (a cycle the engine's transfers break the same way).
    private let observer: Locked<(any TransferObserver)?>
    let transport: CachingTransport
    private let state = Locked(State.idle)

    init(request: TransferRequest, observer: any TransferObserver, transport: CachingTransport) {
        self.request = request
        self.observer = Locked(observer)
        self.transport = transport
    }

    /// Delivers the one completion and lets the observer go.
    private func complete(with result: Result<TransferResponse, TransferError>) {
        let observer = self.observer.withLock { observer in
            defer { observer = nil }
            return observer
        }
        observer?.transferDidComplete(with: result)
    }

    private func update(_ progress: TransferProgress) {
        self.observer.withLock { $0 }?.transferDidUpdate(progress)
    }

    private var cache: HTTPCache { self.transport.cache }

    func start() {
        let starts = self.state.withLock { state -> Bool in
            guard case .idle = state else { return false }
            state = .lookingUp(cancelled: false)
            return true
        }
        guard starts else { return }
        guard CacheEligibility.isEligible(self.request) else {
            self.run(self.request, plan: .passThrough)
            return
        }
        self.cache.queue.async { self.lookUp() }
    }

    func cancel() {
        let control: (any TransferControl)? = self.state.withLock { state in
            switch state {
            case .idle:
                state = .finished
                self.cache.queue.async { self.complete(with: .failure(self.cancellation)) }
                return nil
            case .lookingUp:
                state = .lookingUp(cancelled: true)
                return nil
            case .running(let control, _):
                state = .running(control, cancelled: true)
                return control
            case .finished:
                return nil
            }
        }
        control?.cancel()
    }

    func pause() {
        self.runningControl()?.pause()
    }

    func resume() {
        self.runningControl()?.resume()
    }

    private func runningControl() -> (any TransferControl)? {
        self.state.withLock { state in
            if case .running(let control, _) = state { return control }
            return nil
        }
    }

    private var cancellation: TransferError {
        TransferError.cancelled(url: self.request.url)
    }

    // MARK: Lookup, on the cache's queue

    private func lookUp() {
        let now = self.cache.now()
        switch self.cache.lookUp(self.request, now: now) {
        case .bypass:
            self.run(self.request, plan: .passThrough)
        case .miss:
            self.run(self.request, plan: .fetch(requestTime: now))
        case .revalidate(let entry, let body, let conditions):
            var conditional = self.request
            for field in conditions { conditional.head.headerFields[field.name] = field.value }
            self.run(conditional, plan: .revalidate(entry, body: body, requestTime: now))
        case .fresh(let entry, let body, let age):
            var head = entry.head
            head.headerFields[.age] = String(age)
            self.answer(TransferResponse(head: head, body: body, fileURL: nil, url: entry.url, metrics: TransferMetrics()),
                        outcome: .hit)
        case .unsatisfiable:
            guard let url = self.request.url else {
                self.run(self.request, plan: .passThrough)
                return
            }
            var head = HTTPResponse(status: .gatewayTimeout)
            head.headerFields[.contentLength] = "0"
            self.answer(TransferResponse(head: head, body: Data(), fileURL: nil, url: url, metrics: TransferMetrics()),
                        outcome: .miss)
        }
    }

    /// Completes with a response made by the cache (unless cancelled meanwhile).
    private func answer(_ response: TransferResponse, outcome: CacheOutcome) {
        let cancelled = self.state.withLock { state -> Bool in
            let cancelled: Bool
            switch state {
            case .lookingUp(let flag): cancelled = flag
            case .running(_, let flag): cancelled = flag
            case .idle, .finished: return true
            }
            state = .finished
            return cancelled
        }
        if cancelled {
            self.complete(with: .failure(self.cancellation))
            return
        }
        var response = response
        response.metrics.cacheOutcome = outcome
        let length = Int64(response.body?.count ?? 0)
        self.update(TransferProgress(bytesReceived: length, expectedBytesToReceive: length))
        self.complete(with: .success(response))
    }

    // MARK: The base transfer

    /// Runs `request` on the base transport (unless cancelled meanwhile).
    private func run(_ request: TransferRequest, plan: Plan) {
        let control = self.transport.base.makeTransfer(request, observer: BaseObserver(transfer: self, plan: plan))
        let proceeds = self.state.withLock { state -> Bool in
            switch state {
            case .lookingUp(cancelled: false), .running(_, cancelled: false):
                state = .running(control, cancelled: false)
                return true
            case .idle, .lookingUp(cancelled: true), .running(_, cancelled: true), .finished:
                state = .finished
                return false
            }
        }
        if proceeds {
            control.start()
        } else {
            // Called from `start()` too, which must not call the observer.
            self.cache.queue.async { self.complete(with: .failure(self.cancellation)) }
        }
    }

    /// The base transfer ended: store, revalidate or invalidate as planned, then complete.
    fileprivate func baseDidComplete(with result: Result<TransferResponse, TransferError>, plan: Plan) {
        var result = result
        switch plan {
        case .passThrough:
            self.cache.invalidate(CacheInvalidation.keys(for: self.request, result: result))
        case .fetch(let requestTime):
            if case .success(var response) = result {
                self.store(response, requestTime: requestTime)
                response.metrics.cacheOutcome = .miss
                result = .success(response)
            }
        case .revalidate(let entry, let body, let requestTime):
            guard case .success(var response) = result else { break }
            guard response.head.status == .notModified else {
                self.store(response, requestTime: requestTime)
                response.metrics.cacheOutcome = .miss
                result = .success(response)
                break
            }
            guard let head = CacheValidation.updated(entry.head, with: response.head) else {
                // The 304 is about a response the cache does not have: ask again, unconditionally.
                self.run(self.request, plan: .fetch(requestTime: self.cache.now()))
                return
            }
            var refreshed = entry
            refreshed.head = head
            refreshed.requestTime = requestTime
            refreshed.responseTime = self.cache.now()
            self.cache.store(refreshed, body: body)
            response.head = head
            response.body = body
            response.metrics.cacheOutcome = .revalidated
            result = .success(response)
            let length = Int64(body.count)
            self.update(TransferProgress(bytesReceived: length, expectedBytesToReceive: length))
        }
        self.state.withLock { $0 = .finished }
        self.complete(with: result)
    }

    private func store(_ response: TransferResponse, requestTime: Date) {
        guard case .success(let entry) = CacheStorability.entry(
            for: self.request, response: response, requestTime: requestTime, responseTime: self.cache.now()),
            let body = response.body else { return }
        self.cache.store(entry, body: body)
    }

    fileprivate func baseDidUpdate(_ progress: TransferProgress) {
        self.update(progress)
    }
}

/// Hears the base transfer of a ``CachedTransfer``.
private final class BaseObserver: TransferObserver, Sendable {
    let transfer: CachedTransfer
    let plan: CachedTransfer.Plan

    init(transfer: CachedTransfer, plan: CachedTransfer.Plan) {
        self.transfer = transfer
        self.plan = plan
    }

    func transferDidUpdate(_ progress: TransferProgress) {
        self.transfer.baseDidUpdate(progress)
    }

    func transferDidComplete(with result: Result<TransferResponse, TransferError>) {
        self.transfer.baseDidComplete(with: result, plan: self.plan)
    }
}
