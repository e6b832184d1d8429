import CurlewTransport
internal import CoreFoundation

/// Watches sockets with one `epoll` descriptor that is itself the port of a version-1 run-loop
/// source: the run loop's own epoll wakes on it directly, with no helper thread.
///
/// - The epoll set holds each socket with exactly the directions asked for, level-triggered. An
///   empty interest is an `EPOLL_CTL_MOD` with no events: the registration stays.
/// - When the run loop sees the epoll descriptor readable it calls ``drain()``, which collects
///   ready events with a zero-timeout `epoll_wait` (64 per batch, again while a batch is full) and
///   hands each to the handler.
/// - **CF watches its ports edge-triggered** (`EPOLLIN|EPOLLET` in its port set), and a nested epoll
///   descriptor does not signal its waiters again for readiness that merely remains. Measured: a
///   socket left readable after a drain did not fire the source again. So after any drain that
///   delivered something, a version-0 "recheck" source is signalled; the loop runs it on its next
///   pass (after timers and other sources) and it drains once more, until a drain finds nothing.
///   That restores level-triggered behaviour, including for an interest changed while the socket
///   is already ready.
/// - Each registration carries a token in the event's user data, so an event fetched before its
///   socket was closed (and the descriptor number reused) is recognised as stale and dropped.
///
/// Confined to the network thread.
final class EpollSourceWatcher: SocketWatcher {
    /// Batches per drain before yielding to the run loop (the recheck continues later).
    private static let maxBatchesPerDrain = 16

    private let sockets: EpollSet
    private let slot: HandlerSlot
    private let loop: CFRunLoop
    private let modeNames: [CFString]
    private let reportFailure: (Int32) -> Void
    private var portSource: CFRunLoopSource?
    private var recheckSource: CFRunLoopSource?
    var watchedCount: Int { self.sockets.watchedCount }
    var armedCount: Int { self.sockets.armedCount }

    /// Creates the epoll set and adds its sources to `loop` in `modeNames`; `nil` if the process is
    /// out of descriptors or memory.
    ///
    /// - Parameters:
    ///   - reportFailure: Called (on the thread) with a socket the kernel refused to watch; the
    ///     scheduler then reports an error for it later, never from inside `setInterest`.
    static func make(
        loop: CFRunLoop, modeNames: [CFString], slot: HandlerSlot, reportFailure: @escaping (Int32) -> Void
    ) -> EpollSourceWatcher? {
        guard let sockets = EpollSet.make() else { return nil }
        let watcher = EpollSourceWatcher(
            sockets: sockets, loop: loop, modeNames: modeNames, slot: slot, reportFailure: reportFailure)
        guard watcher.install() else {
            watcher.tearDown()
            return nil
        }
        return watcher
    }

    private init(
        sockets: EpollSet, loop: CFRunLoop, modeNames: [CFString], slot: HandlerSlot,
        reportFailure: @escaping (Int32) -> Void
    ) {
        self.sockets = sockets
        self.loop = loop
        self.modeNames = modeNames
        self.slot = slot
        self.reportFailure = reportFailure
    }

    private func install() -> Bool {
        let info = Unmanaged.passUnretained(self).toOpaque()

        var portContext = CFRunLoopSourceContext1()
        portContext.version = 1
        portContext.info = info
        portContext.retain = CFContextRetain.retain
        portContext.release = CFContextRetain.release
        portContext.getPort = { info in
            guard let info else { return -1 }
            return Unmanaged<EpollSourceWatcher>.fromOpaque(info).takeUnretainedValue().sockets.descriptor
        }
        portContext.perform = { info in
            guard let info else { return }
            Unmanaged<EpollSourceWatcher>.fromOpaque(info).takeUnretainedValue().drain()
        }
        let portSource = withUnsafeMutablePointer(to: &portContext) { pointer in
            // CF reads a version-1 context through the version-0 pointer type, by `version`.
            CFRunLoopSourceCreate(kCFAllocatorDefault, 0, UnsafeMutablePointer(OpaquePointer(pointer)))
        }

        var recheckContext = CFRunLoopSourceContext()
        recheckContext.version = 0
        recheckContext.info = info
        recheckContext.retain = CFContextRetain.retain
        recheckContext.release = CFContextRetain.release
        recheckContext.perform = { info in
            guard let info else { return }
            Unmanaged<EpollSourceWatcher>.fromOpaque(info).takeUnretainedValue().drain()
        }
        let recheckSource = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &recheckContext)

        guard let portSource, let recheckSource else { return false }
        self.portSource = portSource
        self.recheckSource = recheckSource
        for mode in self.modeNames {
            CFRunLoopAddSource(self.loop, portSource, mode)
            CFRunLoopAddSource(self.loop, recheckSource, mode)
        }
        return true
    }

    // MARK: SocketWatcher

    func setInterest(_ interest: SocketInterest, for socket: Int32) {
        if !self.sockets.setInterest(interest, for: socket) { self.reportFailure(socket) }
    }

    func close(socket: Int32) {
        self.sockets.close(socket: socket)
    }

    func tearDown() {
        // Remove the sources first: CF asks for the port (our descriptor) to take it out of its set.
        if let portSource { CFRunLoopSourceInvalidate(portSource) }
        if let recheckSource { CFRunLoopSourceInvalidate(recheckSource) }
        self.portSource = nil  // drops the source, which releases its reference to `self`
        self.recheckSource = nil
        self.sockets.closeAll()
    }

    /// Whether `socket` is in the epoll set now (a parked socket leaves it after a hang-up).
    func isInEpollSet(_ socket: Int32) -> Bool {
        self.sockets.isInEpollSet(socket)
    }

    func isArmed(_ socket: Int32) -> Bool {
        self.sockets.isArmed(socket)
    }

    // MARK: Events

    /// Delivers every ready event; called by the run loop when the epoll descriptor is readable, and
    /// by the recheck source after a drain that delivered something.
    func drain() {
        let fetched = self.sockets.drain(maxBatches: Self.maxBatchesPerDrain) { socket, events in
            self.slot.handler?.socketBecameReady(socket, events: events)
        }
        if fetched, let recheckSource {
            CFRunLoopSourceSignal(recheckSource)
        }
    }
}
