import CurlewTransport
import Dispatch

/// The GCD-first `TransferScheduler`: one serial `DispatchQueue` is the context, `DispatchSource`s
/// watch the sockets, and one `DispatchSourceTimer` is curl's timer. No thread of its own: libdispatch's
/// manager thread waits in `epoll_wait` and the handlers run on the queue.
///
/// ```swift
/// let engine = TransferEngine(scheduler: DispatchScheduler())     // the engine binds it
/// let onMyQueue = DispatchScheduler(label: "api", target: myQueue) // callbacks serialized on myQueue's thread
/// let perSocket = DispatchScheduler(sockets: .sourcePerSocket)     // URLSession's model: a source per socket
/// ```
///
/// By default (``SocketStrategy/epollSource``) one dispatch read source watches an `epoll` set that
/// holds curl's sockets, so one wake-up of the queue's thread handles every socket that is ready;
/// ``SocketStrategy/sourcePerSocket`` gives each socket a read source, and a write source once curl
/// asks for writing. Either way the scheduler keeps the `TransferScheduler` contract:
///
/// - **Exact arming.** A direction curl no longer wants is disarmed at once (a source is suspended,
///   an epoll registration modified), so an event for a direction not asked for is never delivered,
///   and a pooled connection reused for the next request costs no new source.
/// - **Close ownership.** ``close(socket:)`` closes the descriptor once libdispatch holds no state
///   for it: at once for a socket in the epoll set, in the last cancel handler of its sources
///   otherwise, never earlier, so the kernel cannot reuse the number meanwhile.
/// - **Timer.** `.after(milliseconds: 0)` schedules the timer for "now": it fires as a later block on
///   the queue, never inside ``setTimer(_:)``.
/// - **Shutdown** cancels everything and completes once every descriptor is closed, without blocking
///   the queue.
///
/// Suspending ``queue`` stops the context: nothing is performed and no event is delivered until it
/// is resumed.
///
/// - Warning: All requirements except ``perform(_:)``, ``isOnContext``, ``bind(_:)`` and ``name``
///   must be called on ``queue`` (checked with `dispatchPrecondition`).
public final class DispatchScheduler: TransferScheduler, @unchecked Sendable {
    // @unchecked Sendable: every mutable property below, and the watcher's state, is confined to
    // `queue` (the socket sources, the timer and their handlers target it, and the requirements that
    // touch state must be called on it). The slot's handler is written by `bind(_:)` before any work
    // reaches the queue, and otherwise only on it.

    /// The serial queue that is the scheduler's context. Every event handler runs on it.
    public let queue: DispatchQueue

    /// `"dispatch"`, or `"dispatch-epoll"` with ``SocketStrategy/epollSource``.
    public var name: String { self.socketStrategy == .epollSource ? "dispatch-epoll" : "dispatch" }

    /// How this scheduler watches sockets.
    public let socketStrategy: SocketStrategy

    private let contextKey = DispatchSpecificKey<UInt8>()
    private let slot = HandlerSlot()
    /// Made at the first socket: the strategy's watcher.
    private var watcher: (any SocketWatcher)?
    private var timer: RearmableTimer?
    private var lifecycle = Lifecycle.running
    /// Entered for the shutdown's teardown, left once every descriptor is closed.
    private let shutdownGroup = DispatchGroup()

    /// Source events dropped because their direction was not asked for
    /// (``SocketStrategy/sourcePerSocket`` only; see `SourcePerSocketWatcher`). Read on ``queue``.
    var droppedEventCount: Int {
        (self.watcher as? SourcePerSocketWatcher)?.droppedEventCount ?? 0
    }

    /// Leeway for the timer: curl's timeouts are in milliseconds, so 1 ms of coalescing is free.
    private static let timerLeeway = DispatchTimeInterval.milliseconds(1)

    private enum Lifecycle {
        case running
        case shuttingDown
        case shutDown
    }

    /// Creates a scheduler whose context is a new serial queue.
    ///
    /// - Parameters:
    ///   - label: The queue's label, shown by debuggers and crash reports.
    ///   - qos: The queue's quality of service.
    ///   - target: A queue to target (for example an application's delegate queue); ``isOnContext``
    ///     still answers for this scheduler's own queue only.
    ///   - sockets: How sockets are watched: one epoll set (the default) or a source per socket.
    public init(
        label: String = "curlew.dispatch", qos: DispatchQoS = .default, target: DispatchQueue? = nil,
        sockets: SocketStrategy = .epollSource
    ) {
        self.socketStrategy = sockets
        self.queue = DispatchQueue(label: label, qos: qos, target: target)
        self.queue.setSpecific(key: self.contextKey, value: 1)
    }

    deinit {
        guard self.lifecycle == .running, self.watcher != nil || self.timer != nil else { return }
        // Dropped without `shutdown`: nothing can call in any more, so hand what is left to the queue,
        // where the cancel handlers close the descriptors as usual.
        let leftovers = Leftovers(watcher: self.watcher, timer: self.timer, slot: self.slot)
        self.queue.async { leftovers.cancelAll() }
    }

    // MARK: - Context

    /// Connects the handler that receives socket and timer events; call once, before submitting
    /// work. The scheduler keeps it until ``shutdown(_:)`` completes.
    public func bind(_ handler: any TransferSchedulerEventHandler) {
        precondition(self.slot.handler == nil, "DispatchScheduler.bind(_:) called twice")
        self.slot.handler = handler
    }

    /// Submits `work` to ``queue`` (`async`): it runs after everything submitted before it, never
    /// inside this call.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        self.queue.async(execute: work)
    }

    /// Whether the calling thread is running a block of ``queue`` (also when ``queue`` targets
    /// another queue; a block running directly on that other queue is not on this context).
    public var isOnContext: Bool {
        DispatchQueue.getSpecific(key: self.contextKey) != nil
    }

    // MARK: - Sockets

    /// Watches `socket` for exactly the directions in `interest`: in the epoll set, or with its
    /// sources, created the first time and suspended or resumed afterwards. Ignored after
    /// ``shutdown(_:)`` and for a socket whose close is pending. A socket that cannot be watched gets
    /// an error event later, so curl fails its transfer instead of waiting for it.
    public func setInterest(_ interest: SocketInterest, for socket: Int32) {
        dispatchPrecondition(condition: .onQueue(self.queue))
        guard self.lifecycle == .running else { return }
        if let watcher = self.watcher ?? self.makeWatcher() {
            watcher.setInterest(interest, for: socket)
        } else if !interest.isEmpty {
            self.reportUnwatchable(socket)
        }
    }

    /// Closes `socket` once libdispatch holds no state for it: at once for a socket in the epoll set,
    /// in the last cancel handler of its sources otherwise. A repeated close while the first is
    /// pending is ignored.
    public func close(socket: Int32) {
        dispatchPrecondition(condition: .onQueue(self.queue))
        if let watcher = self.watcher {
            watcher.close(socket: socket)
        } else {
            DeferredCloses.closeDescriptor(socket)
        }
    }

    private func makeWatcher() -> (any SocketWatcher)? {
        let watcher: (any SocketWatcher)? =
            switch self.socketStrategy {
            case .sourcePerSocket:
                SourcePerSocketWatcher(queue: self.queue, slot: self.slot)
            case .epollSource:
                EpollSourceWatcher.make(queue: self.queue, slot: self.slot) { [weak self] socket in
                    self?.reportUnwatchable(socket)
                }
            }
        self.watcher = watcher
        return watcher
    }

    /// Reports an error for a socket that could not be watched, later and only if it is still
    /// armed, so curl fails the transfer instead of waiting forever.
    private func reportUnwatchable(_ socket: Int32) {
        self.queue.async { [weak self] in
            guard let self, self.lifecycle == .running else { return }
            if let watcher = self.watcher, !watcher.isArmed(socket) { return }
            self.slot.handler?.socketBecameReady(socket, events: .error)
        }
    }

    // MARK: - Timer

    /// Re-arms (or disarms) the one timer source; `.after(milliseconds: 0)` fires as a later block on
    /// ``queue``. Ignored after ``shutdown(_:)``.
    public func setTimer(_ request: TimerRequest) {
        dispatchPrecondition(condition: .onQueue(self.queue))
        guard self.lifecycle == .running else { return }
        switch request {
        case .disarm:
            self.timer?.disarm()
        case .after(let milliseconds):
            self.makeTimerIfNeeded().arm(afterMilliseconds: milliseconds)
        }
    }

    private func makeTimerIfNeeded() -> RearmableTimer {
        if let timer = self.timer { return timer }
        let timer = RearmableTimer(queue: self.queue, leeway: Self.timerLeeway) { [weak self] in
            self?.timerSourceFired()
        }
        self.timer = timer
        return timer
    }

    private func timerSourceFired() {
        guard let timer = self.timer, timer.claimFire() else { return }
        self.slot.handler?.timerFired()
    }

    // MARK: - Diagnostics and shutdown

    /// What the scheduler holds: watches, watches with an armed direction, descriptors waiting for
    /// their cancel handlers, and whether the timer is armed. Read on ``queue``.
    public var diagnostics: SchedulerDiagnostics {
        dispatchPrecondition(condition: .onQueue(self.queue))
        return SchedulerDiagnostics(
            watchedSockets: self.watcher?.watchedCount ?? 0,
            armedSockets: self.watcher?.armedCount ?? 0,
            pendingCloses: self.watcher?.pendingCloses ?? 0,
            timerArmed: self.timer?.isArmed ?? false
        )
    }

    /// Cancels the timer and every watch, and once every cancel handler ran and every descriptor is
    /// closed, releases the handler and calls `completion` on ``queue``. The queue is never blocked
    /// meanwhile. A second call completes after the first.
    public func shutdown(_ completion: @escaping @Sendable () -> Void) {
        dispatchPrecondition(condition: .onQueue(self.queue))
        guard self.lifecycle == .running else {
            // A second shutdown completes after the first one.
            self.shutdownGroup.notify(queue: self.queue, execute: completion)
            return
        }
        self.lifecycle = .shuttingDown
        self.timer?.cancel()
        self.timer = nil
        if let watcher = self.watcher {
            // The watcher stays, so that a close meanwhile is still its to make (an epoll set takes
            // the socket out instead of leaving it to be closed a second time).
            self.shutdownGroup.enter()
            watcher.tearDown { [shutdownGroup = self.shutdownGroup] in shutdownGroup.leave() }
        }
        self.shutdownGroup.notify(queue: self.queue) { [self] in
            self.lifecycle = .shutDown
            self.slot.handler = nil
            completion()
        }
    }
}

/// What a scheduler dropped without ``DispatchScheduler/shutdown(_:)`` still holds, moved to its queue
/// to be cancelled there.
private final class Leftovers: @unchecked Sendable {
    // @unchecked Sendable: created in `deinit` (no other reference to the scheduler exists) and then
    // used only on the scheduler's queue.
    private let watcher: (any SocketWatcher)?
    private let timer: RearmableTimer?
    private let slot: HandlerSlot

    init(watcher: (any SocketWatcher)?, timer: RearmableTimer?, slot: HandlerSlot) {
        self.watcher = watcher
        self.timer = timer
        self.slot = slot
    }

    func cancelAll() {
        // The scheduler is gone: nothing it watched reaches its handler any more.
        self.slot.handler = nil
        self.timer?.cancel()
        self.watcher?.tearDown(then: {})
    }
}
