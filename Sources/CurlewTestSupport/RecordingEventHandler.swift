import CurlewTransport

/// A probe ``TransferSchedulerEventHandler`` that counts what a scheduler delivers, checks that each
/// call arrives on the scheduler's context, and can react on the context (drain a socket, record
/// state) through hooks.
///
/// ```swift
/// let scheduler = backend.makeScheduler()
/// let probe = RecordingEventHandler(scheduler: scheduler) { socket, _ in SocketPair.drain(socket) }
/// scheduler.bind(probe)
/// ```
///
/// Counts are kept per socket and direction rather than as a log, so an event storm (a write source
/// left armed) cannot exhaust memory.
public final class RecordingEventHandler: TransferSchedulerEventHandler, Sendable {
    /// How many events one socket received, per reported direction.
    public struct SocketCounts: Sendable, Hashable {
        /// Calls whose events contained `.read`.
        public var read = 0
        /// Calls whose events contained `.write`.
        public var write = 0
        /// Calls whose events contained `.error`.
        public var error = 0
        /// Calls for the socket.
        public var total = 0
    }

    private struct State: Sendable {
        var sockets: [Int32: SocketCounts] = [:]
        var timerFires = 0
        var callsOffContext = 0
    }

    private let state = Locked(State())
    private let isOnContext: @Sendable () -> Bool
    private let onSocketReady: @Sendable (Int32, SocketEvents) -> Void
    private let onTimerFired: @Sendable () -> Void

    /// Creates a probe for `scheduler` (held weakly, to ask ``TransferScheduler/isOnContext`` on
    /// each call; the scheduler holds the probe once bound).
    ///
    /// - Parameters:
    ///   - scheduler: The scheduler whose context every call must arrive on.
    ///   - onSocketReady: Runs on the context after each socket event is counted.
    ///   - onTimerFired: Runs on the context after each timer fire is counted.
    public init(
        scheduler: any TransferScheduler,
        onSocketReady: @escaping @Sendable (Int32, SocketEvents) -> Void = { _, _ in },
        onTimerFired: @escaping @Sendable () -> Void = {}
    ) {
        self.isOnContext = { [weak scheduler] in scheduler?.isOnContext ?? false }
        self.onSocketReady = onSocketReady
        self.onTimerFired = onTimerFired
    }

    // MARK: TransferSchedulerEventHandler

    public func socketBecameReady(_ socket: Int32, events: SocketEvents) {
        let onContext = self.isOnContext()
        self.state.withLock { state in
            var counts = state.sockets[socket, default: SocketCounts()]
            counts.total += 1
            if events.contains(.read) { counts.read += 1 }
            if events.contains(.write) { counts.write += 1 }
            if events.contains(.error) { counts.error += 1 }
            state.sockets[socket] = counts
            if !onContext { state.callsOffContext += 1 }
        }
        self.onSocketReady(socket, events)
    }

    public func timerFired() {
        let onContext = self.isOnContext()
        self.state.withLock { state in
            state.timerFires += 1
            if !onContext { state.callsOffContext += 1 }
        }
        self.onTimerFired()
    }

    // MARK: What was recorded

    /// The events `socket` received so far.
    public func counts(for socket: Int32) -> SocketCounts {
        self.state.withLock { $0.sockets[socket] ?? SocketCounts() }
    }

    /// How many socket events were delivered, over all sockets.
    public var totalSocketEvents: Int {
        self.state.withLock { $0.sockets.values.reduce(0) { $0 + $1.total } }
    }

    /// How many times the timer fired.
    public var timerFireCount: Int {
        self.state.withLock { $0.timerFires }
    }

    /// How many calls (socket or timer) arrived off the scheduler's context; a conforming scheduler
    /// keeps this at zero.
    public var callsOffContext: Int {
        self.state.withLock { $0.callsOffContext }
    }
}
