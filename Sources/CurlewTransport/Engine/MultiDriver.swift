import Foundation
internal import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// Drives one curl multi handle from a scheduler's events: the engine's insides.
///
/// curl tells the driver which sockets to watch and when to wake it (`CURLMOPT_SOCKETFUNCTION`,
/// `CURLMOPT_TIMERFUNCTION`); the driver passes that on to its ``TransferScheduler``, and turns the
/// scheduler's readiness and timer events into `curl_multi_socket_action` calls, after which it
/// completes the transfers curl reports done (`curl_multi_info_read`).
///
/// **Socket ownership.** Every socket curl opens for a connection comes from the driver's
/// `CURLOPT_OPENSOCKETFUNCTION`, and the scheduler, not curl, closes the descriptor it watches —
/// after that watch can no longer deliver events. The driver hands curl a *duplicate* of each
/// connection socket and watches the original: libcurl 7.88 to 8.1 closes a socket whose connect
/// never completed (connect timeout, refusal, cancel while connecting) with a plain `close()`,
/// bypassing `CURLOPT_CLOSESOCKETFUNCTION`, and only then says `CURL_POLL_REMOVE` (curl PR
/// #11439). With the duplicate, such a close cannot pull the descriptor out from under a watch or
/// let its number be reused while watched; the driver notices it (curl's copy is gone or is
/// another socket) when curl says `CURL_POLL_REMOVE`, or in a sweep of sockets curl never
/// announced, and hands the original to the scheduler to close. The price is one descriptor more
/// per connection.
///
/// Sockets curl creates otherwise (the threaded resolver's socketpair) are closed by curl right
/// after it asks to stop watching them; the driver watches a duplicate of such a socket too.
///
/// Safety: `@unchecked Sendable` because all mutable state is confined to the scheduler's context;
/// only `scheduler` (immutable) is touched from other threads, to submit work.
final class MultiDriver: TransferSchedulerEventHandler, @unchecked Sendable {
    let scheduler: any TransferScheduler
    private let multi: MultiHandle

    /// Connection sockets opened through us, indexed by curl's descriptor.
    private var connections: [ConnectionSocket?] = []
    private var connectionCount = 0
    /// curl's descriptors of connection sockets not yet announced to the socket callback.
    private var unannounced: Set<Int32> = []
    /// Sockets curl opened without us: curl's descriptor → the duplicate we watch.
    private var duplicateByForeign: [Int32: Int32] = [:]
    /// For every watched descriptor, curl's descriptor of the same socket (-1: none).
    private var curlDescriptorByWatched: [Int32] = []

    private var idleHandles: [EasyHandle] = []
    private static let idleHandleLimit = 512
    /// Transfers started and not finished (running or paused), kept alive here, by ``Transfer/id``.
    private var live: [UInt64: Transfer] = [:]
    /// The transfers' total-timeout deadlines (see ``DeadlineQueue``).
    private var deadlines = DeadlineQueue()

    private(set) var isShutDown = false
    private var counters = EngineDiagnostics()

    /// Whether the context is inside ``enter(_:)``: curl's timer requests wait until it ends.
    private var isEntered = false
    /// The deadline curl last asked for (`nil`: none), and the one the scheduler's timer is armed
    /// for. They differ on purpose: see ``applyTimer()``.
    private var curlDeadline: ContinuousClock.Instant?
    private var armedDeadline: ContinuousClock.Instant?
    /// How many times one entry runs curl's due timeouts itself rather than arming a 0 ms timer.
    private static let immediateRoundsPerEntry = 8

    init(scheduler: any TransferScheduler, configuration: TransferEngine.Configuration) {
        guard let multi = MultiHandle() else {
            preconditionFailure("curl_multi_init failed: out of memory")
        }
        self.scheduler = scheduler
        self.multi = multi
        multi.set(CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maximumConnectionsPerHost)
        multi.set(CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maximumConnections)
        multi.set(CURLMOPT_MAXCONNECTS, configuration.effectiveIdleConnectionLimit)
        multi.set(CURLMOPT_PIPELINING, configuration.http2Multiplexing ? Int(CURLPIPE_MULTIPLEX) : 0)
        multi.set(CURLMOPT_MAX_CONCURRENT_STREAMS, configuration.maximumStreamsPerConnection)
        multi.setCallbacks(socket: Self.socketCallback, timer: Self.timerCallback, context: self.pointer)
        scheduler.bind(self)
    }

    /// The driver as curl's user data. The scheduler keeps the driver alive until its shutdown,
    /// which comes after `curl_multi_cleanup`, so curl never sees a dangling pointer.
    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: Scheduler events

    func socketBecameReady(_ socket: Int32, events: SocketEvents) {
        let curlSocket = Int(socket) < self.curlDescriptorByWatched.count ? self.curlDescriptorByWatched[Int(socket)] : -1
        guard curlSocket >= 0 else { return }
        var mask: Int32 = 0
        if events.contains(.read) { mask |= CURL_CSELECT_IN }
        if events.contains(.write) { mask |= CURL_CSELECT_OUT }
        if events.contains(.error) { mask |= CURL_CSELECT_ERR }
        self.enter {
            self.counters.socketActions += 1
            self.multi.socketAction(curlSocket, events: mask)
            self.afterSocketAction()
        }
    }

    func timerFired() {
        self.armedDeadline = nil
        self.enter {
            self.counters.timerFirings += 1
            if let wanted = self.curlDeadline, wanted <= .now { self.curlDeadline = nil }
            self.runDueTimeouts()
        }
    }

    /// Runs `body`, which may call into curl, as one entry of the context into the engine.
    ///
    /// curl may ask for its timer several times while it works (`CURLMOPT_TIMERFUNCTION`); only
    /// its last request matters, so the scheduler's timer is looked at once, when the entry ends.
    /// When curl's deadline has already come (it asks for 0 ms when a transfer was just added),
    /// curl means "call `curl_multi_socket_action` soon, but not from inside my callback": the entry
    /// does that itself right after `body`, instead of a timer round trip through the scheduler.
    /// Nested calls join the outer entry. Before it ends, transfers whose own deadline has passed
    /// are completed as timed out.
    func enter(_ body: () -> Void) {
        guard !self.isEntered else {
            body()
            return
        }
        self.isEntered = true
        body()
        var rounds = 0
        while let wanted = self.curlDeadline, wanted <= .now, rounds < Self.immediateRoundsPerEntry, !self.isShutDown {
            self.curlDeadline = nil
            rounds += 1
            self.runDueTimeouts()
        }
        if let earliest = self.deadlines.earliest, earliest <= .now { self.expireDeadlines() }
        self.isEntered = false
        self.applyTimer()
    }

    /// Arms the scheduler's timer for curl's deadline, lazily.
    ///
    /// curl moves its deadline all the time, mostly *later* (every new request brings a fresh
    /// connect or idle timeout), and re-arming costs a system call in both backends. So the timer
    /// is re-armed only when curl wants it *earlier* than it is armed; a timer that fires early just
    /// leads to a `curl_multi_socket_action` with nothing due, after which the driver arms it again
    /// for curl's real deadline (curl itself would not say it again: it repeats no unchanged
    /// deadline). When curl wants no timer, the armed one is left to fire once, harmlessly.
    private func applyTimer() {
        let wanted: ContinuousClock.Instant?
        switch (self.curlDeadline, self.deadlines.earliest) {
        case (let curl?, let own?): wanted = min(curl, own)
        case (let curl?, nil): wanted = curl
        case (nil, let own): wanted = own
        }
        guard !self.isShutDown, let wanted else { return }
        if let armed = self.armedDeadline, armed <= wanted { return }
        let now = ContinuousClock.now
        let milliseconds = wanted <= now ? 0 : Transfer.milliseconds(wanted - now)
        self.armedDeadline = wanted
        self.counters.timerChanges += 1
        self.scheduler.setTimer(.after(milliseconds: milliseconds))
    }

    private func runDueTimeouts() {
        self.multi.socketAction(CURL_SOCKET_TIMEOUT, events: 0)
        self.afterSocketAction()
    }

    private func afterSocketAction() {
        if !self.unannounced.isEmpty { self.sweepUnannouncedSockets() }
        self.completeFinishedTransfers()
    }

    private func completeFinishedTransfers() {
        while let finished = self.multi.nextCompleted() {
            var pointer: UnsafeMutableRawPointer?
            guard ccurl_easy_getinfo_ptr(finished.easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else {
                continue
            }
            Unmanaged<Transfer>.fromOpaque(pointer).takeUnretainedValue().curlDidFinish(finished.result)
        }
    }

    // MARK: curl's callbacks

    private static let socketCallback: ccurl_socket_callback = { _, socket, what, userp, _ in
        guard let userp else { return -1 }
        Unmanaged<MultiDriver>.fromOpaque(userp).takeUnretainedValue().curlWantsSocket(socket, what: what)
        return 0
    }

    private static let timerCallback: ccurl_timer_callback = { _, milliseconds, userp in
        guard let userp else { return -1 }
        let request: TimerRequest = milliseconds < 0 ? .disarm : .after(milliseconds: milliseconds)
        Unmanaged<MultiDriver>.fromOpaque(userp).takeUnretainedValue().curlWantsTimer(request)
        return 0
    }

    /// `CURLOPT_OPENSOCKETFUNCTION`, installed on every easy handle.
    static let openSocketCallback: ccurl_opensocket_callback = { clientp, _, address in
        guard let clientp else { return ccurl_socket_bad() }
        let descriptor = socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue),
                                address.pointee.protocol)
        guard descriptor >= 0 else { return ccurl_socket_bad() }
        return Unmanaged<MultiDriver>.fromOpaque(clientp).takeUnretainedValue().curlOpened(descriptor)
    }

    /// `CURLOPT_CLOSESOCKETFUNCTION`, installed on every easy handle.
    static let closeSocketCallback: ccurl_closesocket_callback = { clientp, socket in
        guard let clientp else { return Glibc.close(socket) }
        Unmanaged<MultiDriver>.fromOpaque(clientp).takeUnretainedValue().curlClosing(socket)
        return 0
    }

    private func curlWantsTimer(_ request: TimerRequest) {
        self.counters.timerUpdates += 1
        switch request {
        case .disarm: self.curlDeadline = nil
        case .after(let milliseconds): self.curlDeadline = .now + .milliseconds(milliseconds)
        }
        if !self.isEntered { self.applyTimer() }
    }

    private func curlWantsSocket(_ socket: Int32, what: Int32) {
        var interest: SocketInterest = []
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { interest.insert(.read) }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { interest.insert(.write) }

        if var connection = self.connection(socket) {
            if what == CURL_POLL_REMOVE {
                if connection.isGone(as: socket) {
                    self.release(socket)
                } else if connection.isWatched {
                    // The connection goes back to curl's pool: disarm, keep the watch for its next request.
                    self.scheduler.setInterest([], for: connection.watched)
                }
            } else {
                if !connection.isWatched {
                    connection.isWatched = true
                    self.connections[Int(socket)] = connection
                    self.unannounced.remove(socket)
                }
                self.scheduler.setInterest(interest, for: connection.watched)
            }
            return
        }

        if what == CURL_POLL_REMOVE {
            if let duplicate = self.duplicateByForeign.removeValue(forKey: socket) {
                self.unmap(duplicate)
                self.scheduler.close(socket: duplicate)
            }
            return
        }
        let duplicate: Int32
        if let existing = self.duplicateByForeign[socket] {
            duplicate = existing
        } else {
            duplicate = fcntl(socket, F_DUPFD_CLOEXEC, 0)
            // Without a duplicate the socket goes unwatched; curl's timer still drives it.
            guard duplicate >= 0 else { return }
            self.duplicateByForeign[socket] = duplicate
            self.map(duplicate, to: socket)
        }
        self.scheduler.setInterest(interest, for: duplicate)
    }

    /// Keeps the new socket and returns curl's duplicate of it (`CURL_SOCKET_BAD` if none can be made).
    private func curlOpened(_ socket: Int32) -> Int32 {
        let forCurl = fcntl(socket, F_DUPFD_CLOEXEC, 0)
        guard forCurl >= 0, let connection = ConnectionSocket(watching: socket) else {
            Glibc.close(socket)
            if forCurl >= 0 { Glibc.close(forCurl) }
            return ccurl_socket_bad()
        }
        // A record under this number means curl closed that socket behind our back before now.
        if self.connection(forCurl) != nil { self.release(forCurl) }
        if Int(forCurl) >= self.connections.count {
            self.connections.append(contentsOf: repeatElement(nil, count: Int(forCurl) + 64 - self.connections.count))
        }
        self.connections[Int(forCurl)] = connection
        self.connectionCount += 1
        self.map(socket, to: forCurl)
        self.unannounced.insert(forCurl)
        return forCurl
    }

    /// `CURLOPT_CLOSESOCKETFUNCTION`: curl is done with a connection socket.
    private func curlClosing(_ socket: Int32) {
        guard self.connection(socket) != nil else {
            Glibc.close(socket)
            return
        }
        Glibc.close(socket)  // curl's duplicate: never watched, safe to close now.
        self.release(socket)
    }

    /// Forgets the connection socket curl knows as `socket` and has the scheduler close the original.
    private func release(_ socket: Int32) {
        guard let connection = self.connection(socket) else { return }
        self.connections[Int(socket)] = nil
        self.connectionCount -= 1
        self.unannounced.remove(socket)
        self.unmap(connection.watched)
        self.scheduler.close(socket: connection.watched)
    }

    /// Records that events for the watched descriptor go to curl as `curlSocket`.
    private func map(_ watched: Int32, to curlSocket: Int32) {
        if Int(watched) >= self.curlDescriptorByWatched.count {
            self.curlDescriptorByWatched.append(
                contentsOf: repeatElement(-1, count: Int(watched) + 64 - self.curlDescriptorByWatched.count))
        }
        self.curlDescriptorByWatched[Int(watched)] = curlSocket
    }

    private func unmap(_ watched: Int32) {
        if Int(watched) < self.curlDescriptorByWatched.count { self.curlDescriptorByWatched[Int(watched)] = -1 }
    }

    private func connection(_ socket: Int32) -> ConnectionSocket? {
        socket >= 0 && Int(socket) < self.connections.count ? self.connections[Int(socket)] : nil
    }

    /// Releases sockets curl closed before ever announcing them (a connect refused at once).
    private func sweepUnannouncedSockets() {
        for socket in self.unannounced {
            if let connection = self.connection(socket), connection.isGone(as: socket) {
                self.release(socket)
            }
        }
    }

    // MARK: Transfers

    /// Keeps `transfer` alive until ``unregister(_:)``.
    func register(_ transfer: Transfer) {
        self.live[transfer.id] = transfer
    }

    func unregister(_ transfer: Transfer) {
        if self.live.removeValue(forKey: transfer.id) != nil {
            self.counters.transfersCompleted += 1
        }
        // Entries of finished transfers wait in the queue until they come due; drop them in bulk
        // when they outnumber the live transfers, so a busy engine's queue stays small.
        if self.deadlines.count > 2 * self.live.count + 64 {
            self.deadlines.compact { self.isCurrent($0) }
        }
    }

    /// Completes `transfer` as timed out at `deadline` unless it has finished or paused by then;
    /// the timer is armed for it when the current entry ends.
    func track(_ transfer: Transfer, deadline: ContinuousClock.Instant) {
        self.deadlines.insert(deadline, for: transfer.id)
    }

    private func isCurrent(_ entry: DeadlineQueue.Entry) -> Bool {
        self.live[entry.transferID]?.deadline == entry.deadline
    }

    private func expireDeadlines() {
        let now = ContinuousClock.now
        while let entry = self.deadlines.popDue(at: now) {
            guard let transfer = self.live[entry.transferID], transfer.deadline == entry.deadline else { continue }
            transfer.deadlineExpired()
        }
    }

    /// A reset easy handle: a pooled one, or a new one (`nil` only when curl cannot allocate).
    func checkOutHandle() -> EasyHandle? {
        self.idleHandles.popLast() ?? EasyHandle()
    }

    /// Returns a handle that is no longer in the multi handle to the pool.
    ///
    /// A handle that recorded an OS `errno` is retired instead: before curl 8.8 neither a later
    /// transfer nor `curl_easy_reset` clears it, so the next failure on the handle would report it
    /// (a refused connect turning a later certificate failure into "cannot connect"). Failures are
    /// rare; a new handle costs one allocation.
    func checkIn(_ easy: EasyHandle) {
        guard easy.info(long: CURLINFO_OS_ERRNO) ?? 0 == 0 else { return }
        easy.reset()
        if self.idleHandles.count < Self.idleHandleLimit {
            self.idleHandles.append(easy)
        }
    }

    /// Adds `easy` to the multi handle; curl starts it on its next timer or socket action.
    func attach(_ easy: EasyHandle) throws(TransferError) {
        let code = self.multi.add(easy)
        guard code == CURLM_OK else {
            throw TransferError(.unknown, "curl_multi_add_handle failed: \(String(cString: curl_multi_strerror(code)))")
        }
    }

    /// Removes `easy` from the multi handle; curl closes its connection if a response was under way.
    func detach(_ easy: EasyHandle) {
        self.multi.remove(easy)
    }

    // MARK: Lifecycle

    /// Cancels every live transfer, cleans the multi handle up (closing pooled connections), then
    /// shuts the scheduler down. Runs on the context.
    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        guard !self.isShutDown else {
            completion()
            return
        }
        self.isShutDown = true
        self.enter {
            for transfer in Array(self.live.values) {
                transfer.engineDidShutDown()
            }
        }
        self.live.removeAll()
        self.multi.cleanup()  // applyTimer does nothing once shut down: the scheduler is done.
        // Whatever curl closed behind our back and never reported.
        for socket in self.connections.indices where self.connections[socket] != nil {
            self.release(Int32(socket))
        }
        for duplicate in self.duplicateByForeign.values {
            self.unmap(duplicate)
            self.scheduler.close(socket: duplicate)
        }
        self.duplicateByForeign.removeAll()
        self.idleHandles.removeAll()
        self.scheduler.shutdown(completion)
    }

    /// Counters and holdings now. Runs on the context.
    var diagnostics: EngineDiagnostics {
        var snapshot = self.counters
        snapshot.liveTransfers = self.live.count
        snapshot.openSockets = self.connectionCount
        snapshot.idleEasyHandles = self.idleHandles.count
        snapshot.foreignSocketWatches = self.duplicateByForeign.count
        snapshot.scheduler = self.scheduler.diagnostics
        return snapshot
    }
}

/// A connection socket: the original the scheduler watches, and what identifies it.
struct ConnectionSocket {
    /// The descriptor the scheduler watches and eventually closes; curl has a duplicate.
    let watched: Int32
    /// The socket's inode, to recognise curl's duplicate (or see that its number is now another socket).
    let inode: UInt
    /// Whether the scheduler watches it (from curl's first announcement on the socket callback).
    var isWatched = false

    init?(watching socket: Int32) {
        var info = stat()
        guard fstat(socket, &info) == 0 else { return nil }
        self.watched = socket
        self.inode = UInt(info.st_ino)
    }

    /// Whether curl's duplicate `socket` is closed, or its number now names another socket.
    func isGone(as socket: Int32) -> Bool {
        var info = stat()
        return fstat(socket, &info) != 0 || UInt(info.st_ino) != self.inode
    }
}
