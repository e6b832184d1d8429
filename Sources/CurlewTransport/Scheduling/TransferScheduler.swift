/// The seam between the transfer engine and an event-delivery model.
///
/// libcurl's multi-socket API needs three things from its host, and a scheduler provides exactly
/// those, on one *context* (a serial queue, or one thread's run loop):
///
/// 1. **perform**: run a block on the context, asynchronously, from any thread;
/// 2. **socket watching** (`CURLMOPT_SOCKETFUNCTION`): report when a socket becomes readable or
///    writable, for precisely the directions curl asked for;
/// 3. **one timer** (`CURLMOPT_TIMERFUNCTION`): fire once after a delay, re-armed or disarmed at will.
///
/// Readiness and timer events go back to the bound ``TransferSchedulerEventHandler`` (the
/// ``TransferEngine``), which calls `curl_multi_socket_action`. Nothing above the engine knows which
/// scheduler runs it, so any measured difference between two schedulers is their scheduling model's.
///
/// A ``TransferEngine`` binds its scheduler when it is made and drives it like this (the calls its
/// internal driver makes, in the order of one transfer):
///
/// ```swift
/// let engine = TransferEngine(scheduler: DispatchScheduler())   // calls scheduler.bind(driver)
/// engine.makeTransfer(request).start()                          // scheduler.perform { … } from any thread
/// // then on the context, from curl's callbacks:
/// scheduler.setInterest([.write], for: fd)      // CURL_POLL_OUT: connecting
/// scheduler.setInterest([.read], for: fd)       // CURL_POLL_IN: waiting for the response
/// scheduler.setInterest([], for: fd)            // CURL_POLL_REMOVE: the connection idles in curl's pool
/// scheduler.setTimer(.after(milliseconds: 5))   // CURLMOPT_TIMERFUNCTION
/// scheduler.close(socket: fd)                   // CURLOPT_CLOSESOCKETFUNCTION
/// // and back, on the context, into the bound handler:
/// handler.socketBecameReady(fd, events: [.read])
/// handler.timerFired()
/// ```
///
/// Context-only code asserts where it runs with ``assertOnContext(file:line:)`` (free in release
/// builds) or ``preconditionOnContext(file:line:)``.
///
/// ## Contract
///
/// - Everything except ``perform(_:)``, ``isOnContext``, ``bind(_:)`` and ``name`` is called
///   **on the context only**, and the handler's methods are called on the context only.
/// - Work given to ``perform(_:)`` runs in submission order, never inside the caller.
/// - Every socket passed to ``setInterest(_:for:)`` is the scheduler's to close: after
///   ``close(socket:)`` it stops watching and closes the descriptor itself, **only once no event for
///   it can be delivered any more** (a descriptor number reused by a new socket must never receive a
///   stale watch's events). The engine never closes a watched socket itself.
/// - The watched directions always equal the last interest set: a direction curl no longer asks for
///   is disarmed at once (a writable socket watched for writing by mistake burns a core).
/// - A timer request replaces the previous one; `.after(milliseconds: 0)` fires as soon as possible
///   but never from inside ``setTimer(_:)``.
/// - ``shutdown(_:)`` is called after the engine has cleaned up its multi handle; the scheduler
///   closes what is still pending, releases the handler, and then calls the completion.
public protocol TransferScheduler: AnyObject, Sendable {
    /// A short, stable name for logs, test names and benchmark rows, e.g. `"dispatch"`.
    var name: String { get }

    /// Connects the scheduler to the object that consumes its events. Called once, before any other
    /// requirement except ``name``. The scheduler keeps the handler alive until ``shutdown(_:)``.
    func bind(_ handler: any TransferSchedulerEventHandler)

    /// Runs `work` on the context, asynchronously, after all work submitted before it.
    func perform(_ work: @escaping @Sendable () -> Void)

    /// Whether the calling thread is currently executing on the context.
    var isOnContext: Bool { get }

    /// Watches `socket` for exactly the directions in `interest`.
    ///
    /// The first call for a descriptor starts watching it; an empty interest disarms every
    /// direction but keeps the watch (curl parks idle connections in its pool this way and wakes
    /// them for the next request), so the scheduler can reuse whatever it built for the socket.
    func setInterest(_ interest: SocketInterest, for socket: Int32)

    /// Stops watching `socket` and closes it once no event for it can be delivered any more.
    /// A descriptor that was never watched is closed at once.
    func close(socket: Int32)

    /// Arms, re-arms or disarms the one timer.
    func setTimer(_ request: TimerRequest)

    /// Counts of what the scheduler holds now, for tests and diagnostics. Call on the context.
    var diagnostics: SchedulerDiagnostics { get }

    /// Finishes every pending close, drops all watches and the timer, releases the handler, then
    /// calls `completion` (on any thread). Called on the context, after the engine's cleanup.
    func shutdown(_ completion: @escaping @Sendable () -> Void)
}

extension TransferScheduler {
    /// Stops a debug build when the caller is not on the context; costs nothing in a release build
    /// (like SwiftNIO's `assertInEventLoop`). The engine calls it at every context-only entry.
    public func assertOnContext(file: StaticString = #fileID, line: UInt = #line) {
        assert(self.isOnContext, "\(self.name): a context-only call ran off the scheduler's context", file: file, line: line)
    }

    /// Stops the program, in every build, when the caller is not on the context.
    public func preconditionOnContext(file: StaticString = #fileID, line: UInt = #line) {
        precondition(self.isOnContext, "\(self.name): a context-only call ran off the scheduler's context", file: file, line: line)
    }
}

/// The receiver of a scheduler's events: the ``TransferEngine`` in production, a probe in tests.
///
/// Both methods are called on the scheduler's context only.
public protocol TransferSchedulerEventHandler: AnyObject {
    /// `socket` became ready for the directions in `events`.
    func socketBecameReady(_ socket: Int32, events: SocketEvents)

    /// The timer armed with ``TransferScheduler/setTimer(_:)`` expired.
    func timerFired()
}

/// The directions of readiness curl wants reported for one socket.
public struct SocketInterest: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The directions as bits: ``read`` is 1, ``write`` is 2.
    public let rawValue: UInt8
    /// Creates an interest from its bits (see ``rawValue``).
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Report when the socket is readable (`CURL_POLL_IN`).
    public static let read = SocketInterest(rawValue: 1 << 0)
    /// Report when the socket is writable (`CURL_POLL_OUT`).
    public static let write = SocketInterest(rawValue: 1 << 1)

    /// `none`, `read`, `write` or `read+write`, for logs.
    public var description: String {
        switch self {
        case []: return "none"
        case .read: return "read"
        case .write: return "write"
        default: return "read+write"
        }
    }
}

/// The readiness that fired for one socket; the engine passes it on as `CURL_CSELECT_*` bits.
public struct SocketEvents: OptionSet, Sendable, Hashable {
    /// The readiness as bits: ``read`` is 1, ``write`` is 2, ``error`` is 4.
    public let rawValue: UInt8
    /// Creates readiness from its bits (see ``rawValue``).
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The socket is readable (`CURL_CSELECT_IN`).
    public static let read = SocketEvents(rawValue: 1 << 0)
    /// The socket is writable (`CURL_CSELECT_OUT`).
    public static let write = SocketEvents(rawValue: 1 << 1)
    /// The socket reported an error or hang-up (`CURL_CSELECT_ERR`).
    public static let error = SocketEvents(rawValue: 1 << 2)
}

/// What curl asked of the one timer (`CURLMOPT_TIMERFUNCTION`).
public enum TimerRequest: Sendable, Hashable {
    /// Do not fire (curl passed -1).
    case disarm
    /// Fire once after this many milliseconds; 0 means "soon, but not re-entrantly".
    case after(milliseconds: Int)
}

/// A snapshot of what a scheduler holds, for leak checks in tests and for diagnostics.
public struct SchedulerDiagnostics: Sendable, Hashable, CustomStringConvertible {
    /// Sockets with a watch, armed or not.
    public var watchedSockets: Int
    /// Sockets with at least one armed direction.
    public var armedSockets: Int
    /// Sockets whose close was requested but has not happened yet.
    public var pendingCloses: Int
    /// Whether the timer is armed.
    public var timerArmed: Bool

    /// Creates a snapshot; schedulers fill it from their own bookkeeping.
    ///
    /// - Parameters:
    ///   - watchedSockets: Sockets with a watch, armed or not.
    ///   - armedSockets: Sockets with at least one armed direction.
    ///   - pendingCloses: Sockets whose close was requested but has not happened yet.
    ///   - timerArmed: Whether the timer is armed.
    public init(watchedSockets: Int = 0, armedSockets: Int = 0, pendingCloses: Int = 0, timerArmed: Bool = false) {
        self.watchedSockets = watchedSockets
        self.armedSockets = armedSockets
        self.pendingCloses = pendingCloses
        self.timerArmed = timerArmed
    }

    /// The four counts on one line, for logs: `watched=2 armed=1 pendingCloses=0 timer=true`.
    public var description: String {
        "watched=\(self.watchedSockets) armed=\(self.armedSockets) pendingCloses=\(self.pendingCloses) timer=\(self.timerArmed)"
    }
}
