internal import CCurlewLinux
import Glibc

/// One `epoll` descriptor watching sockets for exactly the directions curl asks for: the part of a
/// scheduler's epoll socket strategy that does not depend on what wakes it. The run-loop backend
/// makes the descriptor the port of a run-loop source; the dispatch backend watches it with one
/// dispatch read source. Both then call ``drain(maxBatches:deliver:)`` on their context.
///
/// - Each armed socket is in the set with exactly its directions, level-triggered.
/// - Parking a socket (an empty interest: curl's `CURL_POLL_REMOVE` when a connection goes back to
///   its pool) costs no system call when the socket was watched for reading only: the registration
///   stays as it is, and re-arming it for reading, as the next request on the connection does,
///   costs none either. An idle connection reports nothing; should its peer send or hang up, the
///   event is dropped and the socket leaves the set (below). Any other parked registration is
///   emptied with an `EPOLL_CTL_MOD` (a writable socket would report at once). Small GETs on kept
///   connections made two `epoll_ctl` calls per request before.
/// - Each registration carries a token in the event's user data, so an event fetched before its
///   socket was closed (and the descriptor number reused within the same batch) is recognised as
///   stale and dropped.
/// - A parked socket (empty interest) that reports an error or hang-up leaves the set until it is
///   armed again: epoll reports those even with no events asked, level-triggered, for ever.
///
/// Confined to the owning scheduler's context; not thread-safe.
package final class EpollSet {
    private struct Registration {
        /// Non-zero while the descriptor is watched; differs between successive watches of one number.
        var token: UInt32 = 0
        var interest: SocketInterest = []
        /// Whether the descriptor is in the epoll set (a parked one leaves it on its first event).
        var inEpoll = false
        /// The events the set asks for it while `inEpoll`: those of `interest`, or, parked, those
        /// it had before (reading) or none.
        var kernelMask: UInt32 = 0
    }

    private static let batchSize: Int32 = 64

    /// The epoll descriptor: readable while any watched socket is ready.
    package let descriptor: Int32
    private let events: UnsafeMutablePointer<ccurlew_epoll_event>
    // The set is confined to its scheduler's context, so its state never sees overlapping access
    // from another thread, and the dynamic exclusivity checks (six per `setInterest`, about 450
    // instructions per request) are left out of the mutable properties that every event touches.
    @exclusivity(unchecked) private var registrations: [Registration] = []
    @exclusivity(unchecked) private var nextToken: UInt32 = 1
    @exclusivity(unchecked) private var isClosed = false
    /// The sockets ``closeAll()`` closed, so that a later ``close(socket:)`` of one does not close
    /// its number again (by then it may belong to another socket).
    private var closedByCloseAll: Set<Int32> = []
    /// Sockets with a watch, armed or not.
    @exclusivity(unchecked) package private(set) var watchedCount = 0
    /// Sockets with at least one armed direction.
    @exclusivity(unchecked) package private(set) var armedCount = 0
    /// `epoll_ctl` calls made so far (what parking without one saves shows here).
    @exclusivity(unchecked) package private(set) var controlCalls = 0

    /// Creates the epoll descriptor; `nil` if the process is out of descriptors or memory.
    package static func make() -> EpollSet? {
        let descriptor = ccurlew_epoll_create()
        guard descriptor >= 0 else { return nil }
        return EpollSet(descriptor: descriptor)
    }

    private init(descriptor: Int32) {
        self.descriptor = descriptor
        self.events = .allocate(capacity: Int(Self.batchSize))
        self.events.initialize(repeating: ccurlew_epoll_event(), count: Int(Self.batchSize))
    }

    deinit {
        self.events.deallocate()
    }

    /// Watches `socket` for exactly `interest`. Returns `false` when the kernel refused to watch an
    /// armed socket: the caller must then report an error for it (later, not from inside curl's
    /// socket callback), or curl would wait for it for ever.
    package func setInterest(_ interest: SocketInterest, for socket: Int32) -> Bool {
        guard socket >= 0, !self.isClosed else { return true }
        let index = Int(socket)
        if index >= self.registrations.count {
            self.registrations.append(
                contentsOf: repeatElement(Registration(), count: index + 1 - self.registrations.count))
        }
        var registration = self.registrations[index]
        if registration.token == 0 {
            registration.token = self.nextToken
            self.nextToken = self.nextToken == UInt32.max ? 1 : self.nextToken + 1
            self.watchedCount += 1
        }
        let data = UInt64(registration.token) << 32 | UInt64(UInt32(bitPattern: socket))
        let mask = Self.epollMask(interest)
        var result: Int32 = 0
        if interest.isEmpty {
            // Parked: a read-only registration stays as it is (see the top of this file).
            if registration.inEpoll && registration.kernelMask & ~CCURLEW_EPOLLIN != 0 {
                result = self.control(CCURLEW_EPOLL_CTL_MOD, socket, 0, data)
                registration.inEpoll = result == 0
                registration.kernelMask = 0
            }
        } else if !registration.inEpoll {
            result = self.control(CCURLEW_EPOLL_CTL_ADD, socket, mask, data)
            if result != 0 && errno == EEXIST {
                // The number is still in the set from a descriptor closed behind our back; take it over.
                result = self.control(CCURLEW_EPOLL_CTL_MOD, socket, mask, data)
            }
            registration.inEpoll = result == 0
            registration.kernelMask = mask
        } else if registration.kernelMask != mask {
            result = self.control(CCURLEW_EPOLL_CTL_MOD, socket, mask, data)
            registration.inEpoll = result == 0
            registration.kernelMask = mask
        }

        if !registration.interest.isEmpty { self.armedCount -= 1 }
        registration.interest = interest
        if !interest.isEmpty { self.armedCount += 1 }
        self.registrations[index] = registration

        return result == 0 || interest.isEmpty
    }

    /// Stops watching `socket` and closes it, at once: no event of the dropped watch is delivered
    /// afterwards, even one already fetched in the current batch. A socket never watched is closed too.
    package func close(socket: Int32) {
        guard socket >= 0 else { return }
        if self.isClosed && self.closedByCloseAll.remove(socket) != nil { return }
        let index = Int(socket)
        if index < self.registrations.count, self.registrations[index].token != 0 {
            let registration = self.registrations[index]
            if registration.inEpoll {
                _ = self.control(CCURLEW_EPOLL_CTL_DEL, socket, 0, 0)
            }
            self.watchedCount -= 1
            if !registration.interest.isEmpty { self.armedCount -= 1 }
            self.registrations[index] = Registration()
        }
        Glibc.close(socket)
    }

    /// Closes every watched socket and the epoll descriptor; the set watches nothing afterwards.
    package func closeAll() {
        guard !self.isClosed else { return }
        self.isClosed = true
        for index in self.registrations.indices where self.registrations[index].token != 0 {
            Glibc.close(Int32(index))
            self.closedByCloseAll.insert(Int32(index))
        }
        self.registrations = []
        self.watchedCount = 0
        self.armedCount = 0
        Glibc.close(self.descriptor)
    }

    /// Whether `socket` is in the epoll set now (a parked socket leaves it after a hang-up).
    package func isInEpollSet(_ socket: Int32) -> Bool {
        socket >= 0 && Int(socket) < self.registrations.count && self.registrations[Int(socket)].inEpoll
    }

    /// Whether `socket` is watched with at least one direction armed.
    package func isArmed(_ socket: Int32) -> Bool {
        socket >= 0 && Int(socket) < self.registrations.count && !self.registrations[Int(socket)].interest.isEmpty
    }

    /// Fetches ready events without waiting, 64 at a time, again while a batch is full, at most
    /// `maxBatches` times, and hands each to `deliver` (only directions armed now, plus `.error`).
    /// Stops at once when `deliver` made the set close (its scheduler shut down: the descriptor
    /// number may already belong to someone else).
    ///
    /// - Returns: Whether anything was fetched.
    @discardableResult
    package func drain(maxBatches: Int, deliver: (Int32, SocketEvents) -> Void) -> Bool {
        var fetched = false
        var batches = 0
        while batches < maxBatches, !self.isClosed {
            batches += 1
            let count = ccurlew_epoll_wait(self.descriptor, self.events, Self.batchSize, 0)
            if count <= 0 { break }
            fetched = true
            for index in 0..<Int(count) {
                guard let (socket, ready) = self.readiness(of: self.events[index]) else { continue }
                deliver(socket, ready)
                if self.isClosed { return true }
            }
            if count < Self.batchSize { break }
        }
        return fetched
    }

    /// What one fetched event means now: `nil` for a stale event or one with nothing armed.
    private func readiness(of event: ccurlew_epoll_event) -> (Int32, SocketEvents)? {
        let socket = Int32(bitPattern: UInt32(truncatingIfNeeded: event.data))
        let token = UInt32(truncatingIfNeeded: event.data >> 32)
        guard socket >= 0, Int(socket) < self.registrations.count else { return nil }
        let registration = self.registrations[Int(socket)]
        // Closed (and perhaps reused) since the event was fetched: not this watch's event.
        guard registration.token == token, token != 0 else { return nil }

        if registration.interest.isEmpty {
            // Parked (CURL_POLL_REMOVE): the peer sent or hung up (epoll reports errors and
            // hang-ups even with no events asked), level-triggered, so take it out of the set until
            // it is armed again.
            if registration.inEpoll {
                _ = self.control(CCURLEW_EPOLL_CTL_DEL, socket, 0, 0)
                self.registrations[Int(socket)].inEpoll = false
            }
            return nil
        }

        var ready: SocketEvents = []
        if event.events & CCURLEW_EPOLLIN != 0 { ready.insert(.read) }
        if event.events & CCURLEW_EPOLLOUT != 0 { ready.insert(.write) }
        let armed = registration.interest.readinessEvents
        if event.events & (CCURLEW_EPOLLERR | CCURLEW_EPOLLHUP) != 0 {
            ready.insert(.error)
            ready.formUnion(armed)
        }
        // Only the directions armed now (the interest may have changed since the event was fetched).
        ready.formIntersection(armed.union(.error))
        return ready.isEmpty ? nil : (socket, ready)
    }

    /// One `epoll_ctl` call on this set, counted.
    private func control(_ operation: Int32, _ socket: Int32, _ mask: UInt32, _ data: UInt64) -> Int32 {
        self.controlCalls += 1
        return ccurlew_epoll_ctl(self.descriptor, operation, socket, mask, data)
    }

    private static func epollMask(_ interest: SocketInterest) -> UInt32 {
        var mask: UInt32 = 0
        if interest.contains(.read) { mask |= CCURLEW_EPOLLIN }
        if interest.contains(.write) { mask |= CCURLEW_EPOLLOUT }
        return mask
    }
}

extension SocketInterest {
    /// The same directions as readiness events.
    fileprivate var readinessEvents: SocketEvents {
        var events: SocketEvents = []
        if self.contains(.read) { events.insert(.read) }
        if self.contains(.write) { events.insert(.write) }
        return events
    }
}
