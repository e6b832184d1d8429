import CurlewTransport
internal import CoreFoundation
internal import Glibc
internal import CCurlewLinux

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
    private struct Registration {
        /// Non-zero while the descriptor is watched; differs between successive watches of one number.
        var token: UInt32 = 0
        var interest: SocketInterest = []
        /// Whether the descriptor is in the epoll set (it leaves it after a hang-up while parked).
        var inEpoll = false
    }

    private static let batchSize: Int32 = 64
    /// Batches per drain before yielding to the run loop (the recheck continues later).
    private static let maxBatchesPerDrain = 16

    private let epollDescriptor: Int32
    private let slot: HandlerSlot
    private let loop: CFRunLoop
    private let modeNames: [CFString]
    private let reportFailure: (Int32) -> Void
    private let events: UnsafeMutablePointer<ccurlew_epoll_event>
    private var registrations: [Registration] = []
    private var nextToken: UInt32 = 1
    private var portSource: CFRunLoopSource?
    private var recheckSource: CFRunLoopSource?
    private var isTornDown = false
    private(set) var watchedCount = 0
    private(set) var armedCount = 0

    /// Creates the epoll set and adds its sources to `loop` in `modeNames`; `nil` if the process is
    /// out of descriptors or memory.
    ///
    /// - Parameters:
    ///   - reportFailure: Called (on the thread) with a socket the kernel refused to watch; the
    ///     scheduler then reports an error for it later, never from inside `setInterest`.
    static func make(
        loop: CFRunLoop, modeNames: [CFString], slot: HandlerSlot, reportFailure: @escaping (Int32) -> Void
    ) -> EpollSourceWatcher? {
        let descriptor = ccurlew_epoll_create()
        guard descriptor >= 0 else { return nil }
        let watcher = EpollSourceWatcher(
            epollDescriptor: descriptor, loop: loop, modeNames: modeNames, slot: slot, reportFailure: reportFailure)
        guard watcher.install() else {
            watcher.tearDown()
            return nil
        }
        return watcher
    }

    private init(
        epollDescriptor: Int32, loop: CFRunLoop, modeNames: [CFString], slot: HandlerSlot,
        reportFailure: @escaping (Int32) -> Void
    ) {
        self.epollDescriptor = epollDescriptor
        self.loop = loop
        self.modeNames = modeNames
        self.slot = slot
        self.reportFailure = reportFailure
        self.events = .allocate(capacity: Int(Self.batchSize))
        self.events.initialize(repeating: ccurlew_epoll_event(), count: Int(Self.batchSize))
    }

    deinit {
        self.events.deallocate()
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
            return Unmanaged<EpollSourceWatcher>.fromOpaque(info).takeUnretainedValue().epollDescriptor
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
        guard socket >= 0 else { return }
        let index = Int(socket)
        if index >= self.registrations.count {
            self.registrations.append(
                contentsOf: repeatElement(Registration(), count: index + 1 - self.registrations.count))
        }
        var registration = self.registrations[index]
        if registration.token != 0 && registration.interest == interest && (registration.inEpoll || interest.isEmpty) {
            return  // unchanged (a parked socket that left the set after a hang-up stays out)
        }

        let isNew = registration.token == 0
        if isNew {
            registration.token = self.nextToken
            self.nextToken = self.nextToken == UInt32.max ? 1 : self.nextToken + 1
            self.watchedCount += 1
        }
        let data = UInt64(registration.token) << 32 | UInt64(UInt32(bitPattern: socket))
        let mask = Self.epollMask(interest)
        var result: Int32
        if registration.inEpoll {
            result = ccurlew_epoll_ctl(self.epollDescriptor, CCURLEW_EPOLL_CTL_MOD, socket, mask, data)
        } else {
            result = ccurlew_epoll_ctl(self.epollDescriptor, CCURLEW_EPOLL_CTL_ADD, socket, mask, data)
            if result != 0 && errno == EEXIST {
                // The number is still in the set from a descriptor closed behind our back; take it over.
                result = ccurlew_epoll_ctl(self.epollDescriptor, CCURLEW_EPOLL_CTL_MOD, socket, mask, data)
            }
        }
        registration.inEpoll = result == 0

        if !registration.interest.isEmpty { self.armedCount -= 1 }
        registration.interest = interest
        if !interest.isEmpty { self.armedCount += 1 }
        self.registrations[index] = registration

        if result != 0 && !interest.isEmpty { self.reportFailure(socket) }
    }

    func close(socket: Int32) {
        guard socket >= 0 else { return }
        let index = Int(socket)
        if index < self.registrations.count, self.registrations[index].token != 0 {
            let registration = self.registrations[index]
            if registration.inEpoll {
                _ = ccurlew_epoll_ctl(self.epollDescriptor, CCURLEW_EPOLL_CTL_DEL, socket, 0, 0)
            }
            self.watchedCount -= 1
            if !registration.interest.isEmpty { self.armedCount -= 1 }
            self.registrations[index] = Registration()
        }
        Glibc.close(socket)
    }

    func tearDown() {
        self.isTornDown = true
        // Remove the sources first: CF asks for the port (our descriptor) to take it out of its set.
        if let portSource { CFRunLoopSourceInvalidate(portSource) }
        if let recheckSource { CFRunLoopSourceInvalidate(recheckSource) }
        self.portSource = nil  // drops the source, which releases its reference to `self`
        self.recheckSource = nil
        for index in self.registrations.indices where self.registrations[index].token != 0 {
            Glibc.close(Int32(index))
        }
        self.registrations = []
        self.watchedCount = 0
        self.armedCount = 0
        Glibc.close(self.epollDescriptor)
    }

    /// Whether `socket` is in the epoll set now (a parked socket leaves it after a hang-up).
    func isInEpollSet(_ socket: Int32) -> Bool {
        socket >= 0 && Int(socket) < self.registrations.count && self.registrations[Int(socket)].inEpoll
    }

    func isArmed(_ socket: Int32) -> Bool {
        socket >= 0 && Int(socket) < self.registrations.count && !self.registrations[Int(socket)].interest.isEmpty
    }

    // MARK: Events

    /// Delivers every ready event; called by the run loop when the epoll descriptor is readable, and
    /// by the recheck source after a drain that delivered something.
    func drain() {
        var delivered = false
        var batches = 0
        while batches < Self.maxBatchesPerDrain {
            batches += 1
            let count = ccurlew_epoll_wait(self.epollDescriptor, self.events, Self.batchSize, 0)
            if count <= 0 { break }
            for index in 0..<Int(count) {
                self.deliver(self.events[index])
                // The handler shut the scheduler down: the descriptor is closed (its number may
                // already belong to someone else).
                if self.isTornDown { return }
            }
            delivered = true
            if count < Self.batchSize { break }
        }
        if delivered, let recheckSource {
            CFRunLoopSourceSignal(recheckSource)
        }
    }

    private func deliver(_ event: ccurlew_epoll_event) {
        let socket = Int32(bitPattern: UInt32(truncatingIfNeeded: event.data))
        let token = UInt32(truncatingIfNeeded: event.data >> 32)
        guard socket >= 0, Int(socket) < self.registrations.count else { return }
        let registration = self.registrations[Int(socket)]
        // Closed (and perhaps reused) since the event was fetched: not this watch's event.
        guard registration.token == token, token != 0 else { return }

        if registration.interest.isEmpty {
            // Parked (CURL_POLL_REMOVE): epoll still reports errors and hang-ups with no events asked,
            // level-triggered, so take it out of the set until it is armed again.
            if registration.inEpoll {
                _ = ccurlew_epoll_ctl(self.epollDescriptor, CCURLEW_EPOLL_CTL_DEL, socket, 0, 0)
                self.registrations[Int(socket)].inEpoll = false
            }
            return
        }

        var ready: SocketEvents = []
        if event.events & CCURLEW_EPOLLIN != 0 { ready.insert(.read) }
        if event.events & CCURLEW_EPOLLOUT != 0 { ready.insert(.write) }
        if event.events & (CCURLEW_EPOLLERR | CCURLEW_EPOLLHUP) != 0 {
            ready.insert(.error)
            ready.formUnion(registration.interest.asEvents)
        }
        // Only the directions armed now (the interest may have changed since the event was fetched).
        ready.formIntersection(registration.interest.asEvents.union(.error))
        guard !ready.isEmpty else { return }
        self.slot.handler?.socketBecameReady(socket, events: ready)
    }

    private static func epollMask(_ interest: SocketInterest) -> UInt32 {
        var mask: UInt32 = 0
        if interest.contains(.read) { mask |= CCURLEW_EPOLLIN }
        if interest.contains(.write) { mask |= CCURLEW_EPOLLOUT }
        return mask
    }
}
