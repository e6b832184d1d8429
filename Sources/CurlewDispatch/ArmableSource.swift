import Dispatch

/// One direction (read or write) of a socket watch: a `DispatchSource` that is armed and disarmed
/// by `resume()`/`suspend()` instead of being cancelled and created again.
///
/// curl sends `CURL_POLL_REMOVE` every time a connection goes back to its pool and asks for the
/// socket again on the next request, so creating a source per request would cost an `fstat`, an
/// `epoll_ctl` and a wake-up of libdispatch's manager thread each time. A suspended source costs
/// nothing while it waits: libdispatch disarms the epoll direction after delivering an event and
/// re-arms it only when the source runs its handler, which a suspended source never does (measured
/// on Swift 6.3.1: 0 CPU over 1 s with the descriptor readable, hung up or writable).
///
/// libdispatch traps when a suspended or never-activated source is released and when a source is
/// resumed more often than it was suspended. This type keeps the suspension state, so neither can
/// happen: the source is activated in `init`, `arm()`/`disarm()` are idempotent, and `cancel()` (or
/// `deinit`, as a last resort) leaves the source resumed.
///
/// A source suspended before libdispatch registered it is only registered when resumed, which
/// matters for the order of a socket's read and write registrations: ``SocketSources`` therefore
/// never disarms its read source before that source's registration handler ran.
///
/// Confined to the scheduler's queue, like the ``SocketSources`` that owns it.
final class ArmableSource {
    private let source: any DispatchSourceProtocol
    /// Whether the source is resumed (its direction is watched).
    private(set) var isArmed: Bool
    /// Whether `cancel()` was called; an instance is not used after that.
    private(set) var isCancelled = false

    /// Takes a source whose handlers are set, and activates it: a new source starts armed.
    init(activating source: any DispatchSourceProtocol) {
        self.source = source
        self.isArmed = true
        source.activate()
    }

    /// Starts delivering events again. Does nothing if already armed or cancelled.
    func arm() {
        guard !self.isArmed, !self.isCancelled else { return }
        self.isArmed = true
        self.source.resume()
    }

    /// Stops delivering events until `arm()`. Does nothing if already disarmed or cancelled.
    func disarm() {
        guard self.isArmed, !self.isCancelled else { return }
        self.isArmed = false
        self.source.suspend()
    }

    /// Cancels the source. Its cancel handler runs later, on the target queue, once libdispatch no
    /// longer delivers events for it. A disarmed source is resumed right after `cancel()`, so the
    /// cancellation (not an event) is what it processes next, and it is never released suspended.
    func cancel() {
        guard !self.isCancelled else { return }
        self.isCancelled = true
        self.source.cancel()
        if !self.isArmed {
            self.isArmed = true
            self.source.resume()
        }
    }

    deinit {
        // Normally already cancelled by the watch; this keeps a forgotten source from trapping.
        self.cancel()
    }
}
