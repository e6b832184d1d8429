import CurlewTransport

/// What runs a ``RequestOperation``'s transfer: the seam between operations (and the manager built
/// on them) and the transfer engine.
///
/// `TransferEngine` conforms: that is the real thing, curl on a scheduler. Anything else that
/// answers requests can stand in for it — in particular `StubTransport` (module `CurlewTesting`), which
/// answers from canned responses without sockets, so that code built on Curlew is unit-testable:
///
/// ```swift
/// let stub = StubTransport()
/// stub.respond(to: "/users/1", with: .json(#"{"id":1,"name":"Ada"}"#))
/// let api = RequestOperationManager(baseURL: URL(string: "https://api.example.com/")!, transport: stub)
/// let user = try await api.get("users/1", as: User.self)
/// ```
///
/// The contract, which ``RequestOperation`` relies on:
///
/// - ``makeTransfer(_:observer:)`` returns a ``TransferControl`` and starts nothing.
/// - The control's methods may be called from any thread, at any moment, in any order and any
///   number of times; only `start()` of a new transfer starts it. They must **not** call the
///   observer synchronously, and must not block: an operation calls them while it holds its lock.
///   Deliver events asynchronously instead (the engine delivers them on its network context).
/// - The observer hears ``TransferObserver/transferDidComplete(with:)`` **exactly once** per
///   started transfer, whatever happens — success, failure, `cancel()` at any moment (with a
///   `TransferError` whose code is `TransferError/Code/cancelled`), shutdown — and nothing
///   after it. Its calls for one transfer never overlap.
/// - `pause()` and `resume()` may do nothing (a transport that cannot pause just keeps going); a
///   paused transfer still completes when cancelled.
public protocol TransferRunning: AnyObject, Sendable {
    /// Makes a transfer for `request` whose events go to `observer`; nothing happens until
    /// ``TransferControl/start()``.
    ///
    /// - Parameters:
    ///   - request: What to send, where the body goes, and the transfer options.
    ///   - observer: Hears the transfer's progress and its one completion. The transfer keeps it
    ///     until then.
    /// - Returns: The transfer's controls.
    func makeTransfer(_ request: TransferRequest, observer: any TransferObserver) -> any TransferControl

    /// Runs `work` soon after the events the transport is delivering now, where it delivers them.
    ///
    /// An operation calls it from ``TransferObserver/transferDidComplete(with:)`` to hand the
    /// response to a processing queue: a transport that delivers events in batches (the engine
    /// handles all the sockets one readiness wake-up reports, one after another) can queue the
    /// hand-offs of a batch together, so the processing queue's thread is woken once for them
    /// rather than once per response. `work` must run exactly once, never inside the call when the
    /// transport queues it, and soon: the responses wait for it. The default runs `work` at once.
    func afterCurrentEvents(_ work: @escaping @Sendable () -> Void)
}

extension TransferRunning {
    /// Runs `work` at once.
    public func afterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        work()
    }
}

/// The controls of one transfer made by a ``TransferRunning``. See its contract.
public protocol TransferControl: AnyObject, Sendable {
    /// Starts the transfer; only the first call does anything.
    func start()
    /// Cancels the transfer: it completes with a cancellation error unless it already completed.
    func cancel()
    /// Pauses a running transfer, keeping what it received; may do nothing.
    func pause()
    /// Resumes a paused transfer; may do nothing.
    func resume()
}

/// Hears one transfer's events. Calls for one transfer never overlap; the completion comes once.
public protocol TransferObserver: AnyObject, Sendable {
    /// Body bytes moved in either direction.
    func transferDidUpdate(_ progress: TransferProgress)
    /// The transfer finished: with a complete response (any status), or with an error. Called
    /// exactly once, and nothing is called after it.
    func transferDidComplete(with result: Result<TransferResponse, TransferError>)
}

extension Transfer: TransferControl {}

extension TransferEngine: TransferRunning {
    /// Queues `work` on the engine's context behind the events in hand, when called there (from an
    /// observer's event); runs it at once elsewhere.
    public func afterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        self.runAfterCurrentEvents(work)
    }

    /// Makes a `Transfer` whose delegate forwards to `observer`, on the engine's context.
    public func makeTransfer(_ request: TransferRequest, observer: any TransferObserver) -> any TransferControl {
        self.makeTransfer(request, delegate: ObservingDelegate(observer: observer))
    }
}

/// A `TransferDelegate` that passes the events a ``TransferObserver`` hears on to it.
private final class ObservingDelegate: TransferDelegate, Sendable {
    let observer: any TransferObserver

    init(observer: any TransferObserver) {
        self.observer = observer
    }

    func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) {
        self.observer.transferDidUpdate(progress)
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.observer.transferDidComplete(with: result)
    }
}
