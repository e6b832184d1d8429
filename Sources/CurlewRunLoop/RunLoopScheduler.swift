import CurlewTransport
import Foundation
internal import CoreFoundation
internal import Glibc
import Synchronization

/// The classic scheduler: every callback of a transfer engine runs on one run loop — a
/// ``NetworkThread``'s, like AFNetworking's `+networkRequestThread`, or any other thread's that runs
/// its loop itself (``RunLoopContext``).
///
/// - **perform** queues the block on the thread's run loop in the scheduler's modes and wakes it;
///   on a network thread's own thread it makes sure the loop runs the block before sleeping,
///   without a system call (how: the project's `Docs/Decisions/0002-network-thread-keep-alive-and-perform-nudge.md`).
/// - **sockets** are watched by run-loop sources, in one of two ways (``SocketStrategy``):
///   a `CFSocket` per descriptor (the classic way, with CF's `select()` helper thread), or one
///   `epoll` descriptor that is the port of a version-1 source (no helper thread).
/// - **the timer** is one `CFRunLoopTimer` in every mode, re-armed by moving its fire date.
///
/// Several schedulers may share one thread (``NetworkThread/shared`` by default); each has its own
/// sockets, timer and handler. A scheduler creates nothing on the thread until it is used: its
/// first ``perform(_:)`` (or ``bind(_:)``) starts the thread, its first socket creates the watcher,
/// its first timer request creates the timer.
///
/// ```swift
/// let scheduler = RunLoopScheduler()                     // .shared thread, common modes
/// let scheduler = RunLoopScheduler(sockets: .cfSocket)   // the classic socket sources
/// ```
///
/// Only the run mode matters for whether work runs: a scheduler whose `modes` do not include the
/// mode its thread runs in (directly or through the common modes) never gets its work done.
///
/// `@unchecked Sendable`: apart from immutable configuration and the bind flag (an `Atomic`), all
/// state (handler, watcher, timer, shutdown flag) is confined to the context's thread (asserted in
/// debug builds); ``bind(_:)`` hands the handler over with a perform, and every other call that
/// touches state happens on the thread by contract.
public final class RunLoopScheduler: TransferScheduler, @unchecked Sendable {
    /// The run loop that is this scheduler's context.
    public let context: RunLoopContext
    /// The network thread whose run loop is the context, when it is one.
    public var thread: NetworkThread? { self.context.networkThread }
    /// The run-loop modes the scheduler's work, sources and timer are added in.
    public let modes: [RunLoop.Mode]
    /// How sockets are watched.
    public let socketStrategy: SocketStrategy
    /// `"runloop-epoll"` or `"runloop-cfsocket"`, after the socket strategy.
    public let name: String

    private let modeList: RunLoopModeList
    private let isBound = Atomic<Bool>(false)
    // Confined to the network thread:
    private let slot = HandlerSlot()
    private(set) var watcher: (any SocketWatcher)?
    private(set) var timer: RunLoopTimer?
    /// `nil` until the first perform on a network thread's own thread, and after shutdown.
    private var nudge: PerformNudge?
    private var isShutDown = false

    /// Creates a scheduler on `thread`. Starts nothing: the thread starts on first use.
    ///
    /// - Parameters:
    ///   - thread: The network thread to run on; ``NetworkThread/shared`` by default.
    ///   - modes: The run-loop modes for work, socket sources and the timer; `.common` (the
    ///     default) means the loop's common modes. An empty list means `[.common]`.
    ///   - sockets: How sockets are watched; `.epollSource` by default (why: ``SocketStrategy``).
    public convenience init(
        thread: NetworkThread = .shared,
        modes: [RunLoop.Mode] = [.common],
        sockets: SocketStrategy = .epollSource
    ) {
        self.init(context: .networkThread(thread), modes: modes, sockets: sockets)
    }

    /// Creates a scheduler on `context`'s run loop. Starts nothing: a network thread starts on first use.
    ///
    /// - Parameters:
    ///   - context: The run loop to run on: a network thread's, or a loop its thread runs itself
    ///     (``RunLoopContext/main``, ``RunLoopContext/currentThread()``).
    ///   - modes: The run-loop modes for work, socket sources and the timer; `.common` (the
    ///     default) means the loop's common modes. An empty list means `[.common]`.
    ///   - sockets: How sockets are watched; `.epollSource` by default.
    public init(
        context: RunLoopContext,
        modes: [RunLoop.Mode] = [.common],
        sockets: SocketStrategy = .epollSource
    ) {
        self.context = context
        self.modeList = RunLoopModeList(modes)
        self.modes = self.modeList.modes
        self.socketStrategy = sockets
        self.name = sockets == .cfSocket ? "runloop-cfsocket" : "runloop-epoll"
    }

    deinit {
        // Dropped without shutdown: let the thread take the CF objects down (they hold references
        // to the watcher and timer, never to the scheduler, so nothing dangles meanwhile).
        guard !self.isShutDown, self.watcher != nil || self.timer != nil || self.nudge != nil else { return }
        let leftovers = Leftovers(watcher: self.watcher, timer: self.timer, nudge: self.nudge)
        self.context.perform(self.modeList.performArgument) {
            leftovers.watcher?.tearDown()
            leftovers.timer?.invalidate()
            leftovers.nudge?.invalidate()
        }
    }

    // MARK: TransferScheduler

    /// Binds the handler that receives socket and timer events.
    ///
    /// Called off the thread, it hands the handler over with a perform, so it is in place before
    /// any work submitted after this call runs (and so before any event).
    ///
    /// - Parameter handler: The event consumer; kept until ``shutdown(_:)``.
    public func bind(_ handler: any TransferSchedulerEventHandler) {
        let (first, _) = self.isBound.compareExchange(expected: false, desired: true, ordering: .relaxed)
        precondition(first, "RunLoopScheduler.bind(_:) called twice")
        if self.isOnContext {
            self.slot.handler = handler
            return
        }
        // Hand the handler to the thread; anything the engine submits afterwards runs after this.
        let handover = Handover(handler: handler)
        self.perform { [self] in
            if !self.isShutDown { self.slot.handler = handover.handler }
        }
    }

    /// Queues `work` on the thread's run loop in the scheduler's modes and wakes the loop; starts
    /// the thread on first use. Called on a network thread's own thread, it makes sure the loop runs
    /// `work` before it sleeps, without a system call.
    ///
    /// - Parameter work: Runs on the network thread, after work submitted before it.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        if let nudge = self.nudgeOnNetworkThread() {
            CFRunLoopPerformBlock(nudge.loop, self.modeList.performArgument, work)
            nudge.signal()
        } else {
            self.context.perform(self.modeList.performArgument, work)
        }
    }

    /// Whether the caller runs on the context's thread.
    public var isOnContext: Bool {
        self.context.isCurrent
    }

    /// Arms exactly `interest` for `socket`: `CFSocketEnable`/`DisableCallBacks` on its CFSocket,
    /// or `EPOLL_CTL_ADD`/`MOD` in the scheduler's epoll set. An empty interest keeps the watch.
    ///
    /// - Parameters:
    ///   - interest: The directions to report.
    ///   - socket: The descriptor; from now on the scheduler's to close.
    public func setInterest(_ interest: SocketInterest, for socket: Int32) {
        self.assertOnContext()
        guard !self.isShutDown else { return }
        if let watcher = self.watcher ?? self.makeWatcher() {
            watcher.setInterest(interest, for: socket)
        } else if !interest.isEmpty {
            self.reportUnwatchable(socket)
        }
    }

    /// Drops the watch and closes `socket` at once: the CFSocket is invalidated (or the descriptor
    /// removed from the epoll set, whose events carry a per-watch token) on the network thread, so
    /// no event of the old watch can follow.
    ///
    /// - Parameter socket: The descriptor to close.
    public func close(socket: Int32) {
        self.assertOnContext()
        if let watcher = self.watcher {
            watcher.close(socket: socket)
        } else if socket >= 0 {
            Glibc.close(socket)
        }
    }

    /// Moves the one `CFRunLoopTimer`'s fire date; `.after(milliseconds: 0)` fires on the loop's
    /// next pass.
    ///
    /// - Parameter request: Fire after a delay, or disarm.
    public func setTimer(_ request: TimerRequest) {
        self.assertOnContext()
        guard !self.isShutDown else { return }
        if self.timer == nil, case .after = request {
            self.timer = RunLoopTimer(loop: self.context.runLoop, modeNames: self.modeList.names, slot: self.slot)
        }
        self.timer?.set(request)
    }

    /// What the scheduler holds now; `pendingCloses` is always 0 (closes happen at once).
    public var diagnostics: SchedulerDiagnostics {
        self.assertOnContext()
        return SchedulerDiagnostics(
            watchedSockets: self.watcher?.watchedCount ?? 0,
            armedSockets: self.watcher?.armedCount ?? 0,
            pendingCloses: 0,  // both strategies close at once: no event of a dropped watch can follow
            timerArmed: self.timer?.isArmed ?? false
        )
    }

    /// Invalidates every CFSocket (or removes the epoll source and closes the epoll descriptor),
    /// closes every socket still watched, invalidates the timer, releases the handler, then calls
    /// `completion` on the network thread. The thread itself keeps running.
    ///
    /// - Parameter completion: Called once everything is released.
    public func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.assertOnContext()
        if !self.isShutDown {
            self.isShutDown = true
            self.watcher?.tearDown()
            self.watcher = nil
            self.timer?.invalidate()
            self.timer = nil
            self.nudge?.invalidate()
            self.nudge = nil
            self.slot.handler = nil
        }
        completion()
    }

    // MARK: Private

    /// The nudge, created on first use, when the caller runs on a network thread that is the
    /// context; `nil` on any other thread, on a context that is not a network thread, and after
    /// shutdown.
    private func nudgeOnNetworkThread() -> PerformNudge? {
        guard let thread = self.context.networkThread, thread.isCurrent, !self.isShutDown else { return nil }
        if let nudge { return nudge }
        self.nudge = PerformNudge(loop: CFRunLoopGetCurrent(), modeNames: self.modeList.names)
        return self.nudge
    }

    private func makeWatcher() -> (any SocketWatcher)? {
        let loop = self.context.runLoop
        let report: (Int32) -> Void = { [weak self] socket in self?.reportUnwatchable(socket) }
        let watcher: (any SocketWatcher)? =
            switch self.socketStrategy {
            case .cfSocket:
                CFSocketWatcher(loop: loop, modeNames: self.modeList.names, slot: self.slot, reportFailure: report)
            case .epollSource:
                EpollSourceWatcher.make(
                    loop: loop, modeNames: self.modeList.names, slot: self.slot, reportFailure: report)
            }
        self.watcher = watcher
        return watcher
    }

    /// Reports an error for a socket that could not be watched, later and only if it is still
    /// armed, so curl fails the transfer instead of waiting forever.
    private func reportUnwatchable(_ socket: Int32) {
        self.perform { [self] in
            guard !self.isShutDown else { return }
            if let watcher = self.watcher, !watcher.isArmed(socket) { return }
            self.slot.handler?.socketBecameReady(socket, events: .error)
        }
    }
}

/// The handler on its way to the network thread (`bind` may be called on any thread).
/// `@unchecked Sendable`: written once before the perform, read once on the thread.
private final class Handover: @unchecked Sendable {
    let handler: any TransferSchedulerEventHandler
    init(handler: any TransferSchedulerEventHandler) { self.handler = handler }
}

/// What a scheduler dropped without shutdown leaves for the thread to tear down.
/// `@unchecked Sendable`: created in `deinit` (nothing else refers to the scheduler any more) and
/// then only used on the network thread.
private final class Leftovers: @unchecked Sendable {
    let watcher: (any SocketWatcher)?
    let timer: RunLoopTimer?
    let nudge: PerformNudge?
    init(watcher: (any SocketWatcher)?, timer: RunLoopTimer?, nudge: PerformNudge?) {
        self.watcher = watcher
        self.timer = timer
        self.nudge = nudge
    }
}
