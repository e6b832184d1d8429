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
/// holds curl's sockets, so one wake-up of the queue's thread handles every socket that is ready.
/// How the scheduler keeps the `TransferScheduler` contract with a source per socket
/// (``SocketStrategy/sourcePerSocket``; the epoll set keeps it as the run-loop backend's does):
///
/// - **Exact arming.** Each socket gets a read source, and a write source once curl asks for
///   writing (only after the read source is registered, working around a libdispatch bug: see
///   `SocketWatch`); both are kept until the socket is closed. A direction curl no longer wants is
///   disarmed at once by suspending its source (a write source left armed on a connected socket
///   fires forever, which is how `URLSession` on Linux burns a core while it waits), and re-armed by
///   resuming it, so a pooled connection reused for the next request costs no new source. An event
///   for a direction not asked for is never delivered.
/// - **Close ownership.** ``close(socket:)`` cancels the socket's sources and closes the descriptor
///   in the last cancel handler, never earlier: the kernel must not reuse the number while
///   libdispatch still has state for it.
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
    // @unchecked Sendable: every mutable property below is confined to `queue` (the socket sources,
    // the timer and their handlers target it, and the requirements that touch state must be called
    // on it). `handler` is written once by `bind(_:)` before any work reaches the queue.

    /// The serial queue that is the scheduler's context. Every event handler runs on it.
    public let queue: DispatchQueue

    /// `"dispatch"`, or `"dispatch-epoll"` with ``SocketStrategy/epollSource``.
    public var name: String { self.socketStrategy == .epollSource ? "dispatch-epoll" : "dispatch" }

    /// How this scheduler watches sockets.
    public let socketStrategy: SocketStrategy

    private let contextKey = DispatchSpecificKey<UInt8>()
    private let closes = DeferredCloses()
    private var handler: (any TransferSchedulerEventHandler)?
    private var watches: [Int32: SocketWatch] = [:]
    /// The epoll set and its source (``SocketStrategy/epollSource``), made at the first interest.
    private var epollWatch: EpollSourceWatch?
    private var timer: RearmableTimer?
    private var lifecycle = Lifecycle.running
    /// Source events dropped because their direction was not asked for. A disarmed source must not
    /// keep firing, so this stays near zero; a test reads it (on the queue) to see that disarming
    /// really suspends the source rather than only filtering its events.
    private(set) var droppedEventCount = 0

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
        guard self.lifecycle == .running, !(self.watches.isEmpty && self.timer == nil && self.epollWatch == nil) else {
            return
        }
        // Dropped without `shutdown`: nothing can call in any more, so hand what is left to the queue,
        // where the cancel handlers close the descriptors as usual.
        let leftovers = Leftovers(
            watches: Array(self.watches.values), epollWatch: self.epollWatch, timer: self.timer, closes: self.closes)
        self.queue.async { leftovers.cancelAll() }
    }

    // MARK: - Context

    /// Connects the handler that receives socket and timer events; call once, before submitting
    /// work. The scheduler keeps it until ``shutdown(_:)`` completes.
    public func bind(_ handler: any TransferSchedulerEventHandler) {
        precondition(self.handler == nil, "DispatchScheduler.bind(_:) called twice")
        self.handler = handler
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

    /// Watches `socket` for exactly the directions in `interest`, creating its sources the first time
    /// and suspending or resuming them afterwards. Ignored after ``shutdown(_:)`` and for a socket
    /// whose close is pending.
    public func setInterest(_ interest: SocketInterest, for socket: Int32) {
        dispatchPrecondition(condition: .onQueue(self.queue))
        guard self.lifecycle == .running, !self.closes.isPending(socket) else { return }
        if self.socketStrategy == .epollSource {
            self.setEpollInterest(interest, for: socket)
            return
        }
        let watch: SocketWatch
        if let existing = self.watches[socket] {
            watch = existing
        } else {
            watch = SocketWatch(socket: socket)
            self.watches[socket] = watch
        }
        watch.apply(interest) { direction in self.makeSource(direction, for: socket) }
    }

    /// Cancels the socket's sources and closes it in the last cancel handler (at once if it has no
    /// source). A repeated close while the first is pending is ignored.
    public func close(socket: Int32) {
        dispatchPrecondition(condition: .onQueue(self.queue))
        // A second close of a descriptor still waiting for its cancel handlers must not close the
        // number early (it may already belong to libdispatch's bookkeeping of the old socket).
        guard !self.closes.isPending(socket) else { return }
        if let epollWatch = self.epollWatch {
            epollWatch.close(socket: socket)
            return
        }
        guard let watch = self.watches.removeValue(forKey: socket) else {
            DeferredCloses.closeDescriptor(socket)
            return
        }
        self.closes.closeAfterCancellation(of: watch.sourceCount, socket: socket)
        watch.cancelSources()
    }

    /// Creates an armed source for one direction of `socket`. Its handlers are set once: the event
    /// handler allocates nothing per event, the cancel handler does the deferred close, and a read
    /// source's registration handler lets the watch go on (see `SocketWatch`).
    private func makeSource(_ direction: SocketInterest, for socket: Int32) -> ArmableSource {
        let source: any DispatchSourceProtocol
        let events: SocketEvents
        if direction == .write {
            source = DispatchSource.makeWriteSource(fileDescriptor: socket, queue: self.queue)
            events = .write
        } else {
            source = DispatchSource.makeReadSource(fileDescriptor: socket, queue: self.queue)
            events = .read
        }
        source.setEventHandler { [weak self] in
            self?.socketFired(socket, events: events, direction: direction)
        }
        if direction == .read {
            source.setRegistrationHandler { [weak self] in
                self?.readSourceRegistered(socket)
            }
        }
        source.setCancelHandler { [closes = self.closes] in
            closes.sourceDidCancel(socket: socket)
        }
        return ArmableSource(activating: source)
    }

    /// ``SocketStrategy/epollSource``: watches `socket` in the epoll set, made at the first call.
    /// A socket the kernel refuses (or a set that cannot be made) gets an error event later, so curl
    /// fails its transfer instead of waiting for it.
    private func setEpollInterest(_ interest: SocketInterest, for socket: Int32) {
        if self.epollWatch == nil && !interest.isEmpty {
            self.epollWatch = EpollSourceWatch(queue: self.queue) { [weak self] socket, events in
                self?.handler?.socketBecameReady(socket, events: events)
            }
        }
        let watched = self.epollWatch?.setInterest(interest, for: socket) ?? interest.isEmpty
        guard !watched else { return }
        self.queue.async { [weak self] in
            guard let self, self.lifecycle == .running else { return }
            if let epollWatch = self.epollWatch, !epollWatch.isArmed(socket) { return }
            self.handler?.socketBecameReady(socket, events: .error)
        }
    }

    private func readSourceRegistered(_ socket: Int32) {
        self.watches[socket]?.readerDidRegister { direction in self.makeSource(direction, for: socket) }
    }

    private func socketFired(_ socket: Int32, events: SocketEvents, direction: SocketInterest) {
        // A suspended or cancelled source runs no handler. What arrives here for a direction nobody
        // asked for is a read event before the read source's registration handler ran (see
        // `SocketWatch`), or one raced with a close: it is dropped, and counted for tests.
        guard let watch = self.watches[socket], watch.interest.contains(direction) else {
            self.droppedEventCount += 1
            return
        }
        self.handler?.socketBecameReady(socket, events: events)
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
        self.handler?.timerFired()
    }

    // MARK: - Diagnostics and shutdown

    /// What the scheduler holds: watches, watches with an armed direction, descriptors waiting for
    /// their cancel handlers, and whether the timer is armed. Read on ``queue``.
    public var diagnostics: SchedulerDiagnostics {
        dispatchPrecondition(condition: .onQueue(self.queue))
        var armed = self.epollWatch?.armedCount ?? 0
        for watch in self.watches.values where !watch.interest.isEmpty {
            armed += 1
        }
        return SchedulerDiagnostics(
            watchedSockets: self.watches.count + (self.epollWatch?.watchedCount ?? 0),
            armedSockets: armed,
            pendingCloses: self.closes.count,
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
            self.closes.group.notify(queue: self.queue, execute: completion)
            return
        }
        self.lifecycle = .shuttingDown
        self.timer?.cancel()
        self.timer = nil
        for socket in Array(self.watches.keys) {
            self.close(socket: socket)
        }
        if let epollWatch = self.epollWatch {
            // Its cancel handler closes the sockets still in the set and the epoll descriptor. The
            // watch stays, so that a close meanwhile takes its socket out of the set instead of
            // leaving it to be closed a second time.
            self.closes.group.enter()
            epollWatch.cancel { [closes = self.closes] in closes.group.leave() }
        }
        self.closes.group.notify(queue: self.queue) { [self] in
            self.lifecycle = .shutDown
            self.handler = nil
            completion()
        }
    }
}

/// What a scheduler dropped without ``DispatchScheduler/shutdown(_:)`` still holds, moved to its queue
/// to be cancelled there.
private final class Leftovers: @unchecked Sendable {
    // @unchecked Sendable: created in `deinit` (no other reference to the scheduler exists) and then
    // used only on the scheduler's queue.
    private let watches: [SocketWatch]
    private let epollWatch: EpollSourceWatch?
    private let timer: RearmableTimer?
    private let closes: DeferredCloses

    init(watches: [SocketWatch], epollWatch: EpollSourceWatch?, timer: RearmableTimer?, closes: DeferredCloses) {
        self.watches = watches
        self.epollWatch = epollWatch
        self.timer = timer
        self.closes = closes
    }

    func cancelAll() {
        self.timer?.cancel()
        self.epollWatch?.cancel(then: {})
        for watch in self.watches {
            self.closes.closeAfterCancellation(of: watch.sourceCount, socket: watch.socket)
            watch.cancelSources()
        }
    }
}
