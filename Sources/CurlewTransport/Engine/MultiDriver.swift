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
/// `CURLOPT_OPENSOCKETFUNCTION` and goes back through `CURLOPT_CLOSESOCKETFUNCTION`, so the
/// scheduler, not curl, closes it — after its watch can no longer deliver events. Sockets curl
/// creates otherwise (the threaded resolver's socketpair) are closed by curl right after it asks to
/// stop watching them; the driver watches a duplicate of such a socket instead and hands the
/// duplicate to the scheduler to close, so no watch ever outlives its descriptor.
///
/// Safety: `@unchecked Sendable` because all mutable state is confined to the scheduler's context;
/// only `scheduler` (immutable) is touched from other threads, to submit work.
final class MultiDriver: TransferSchedulerEventHandler, @unchecked Sendable {
    let scheduler: any TransferScheduler
    private let multi: MultiHandle

    /// Per-descriptor flags: bit 0 = opened by curl through us, bit 1 = watched.
    private var socketFlags: [UInt8] = []
    private static let ownedFlag: UInt8 = 1 << 0
    private static let watchedFlag: UInt8 = 1 << 1
    /// Sockets curl opened without us: curl's descriptor → the duplicate we watch, and back.
    private var duplicateByForeign: [Int32: Int32] = [:]
    private var foreignByDuplicate: [Int32: Int32] = [:]

    private var idleHandles: [EasyHandle] = []
    private static let idleHandleLimit = 512
    /// Transfers started and not finished (running or paused), kept alive here.
    private var live: [ObjectIdentifier: Transfer] = [:]

    private(set) var isShutDown = false
    private var counters = EngineDiagnostics()

    init(scheduler: any TransferScheduler, configuration: TransferEngine.Configuration) {
        guard let multi = MultiHandle() else {
            preconditionFailure("curl_multi_init failed: out of memory")
        }
        self.scheduler = scheduler
        self.multi = multi
        multi.set(CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maximumConnectionsPerHost)
        multi.set(CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maximumConnections)
        if let idle = configuration.maximumIdleConnections {
            multi.set(CURLMOPT_MAXCONNECTS, idle)
        }
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
        let curlSocket = self.foreignByDuplicate.isEmpty ? socket : (self.foreignByDuplicate[socket] ?? socket)
        var mask: Int32 = 0
        if events.contains(.read) { mask |= CURL_CSELECT_IN }
        if events.contains(.write) { mask |= CURL_CSELECT_OUT }
        if events.contains(.error) { mask |= CURL_CSELECT_ERR }
        self.counters.socketActions += 1
        self.multi.socketAction(curlSocket, events: mask)
        self.completeFinishedTransfers()
    }

    func timerFired() {
        self.counters.timerFirings += 1
        self.multi.socketAction(CURL_SOCKET_TIMEOUT, events: 0)
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
        Unmanaged<MultiDriver>.fromOpaque(userp).takeUnretainedValue().scheduler.setTimer(request)
        return 0
    }

    /// `CURLOPT_OPENSOCKETFUNCTION`, installed on every easy handle.
    static let openSocketCallback: ccurl_opensocket_callback = { clientp, _, address in
        guard let clientp else { return ccurl_socket_bad() }
        let descriptor = socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue),
                                address.pointee.protocol)
        guard descriptor >= 0 else { return ccurl_socket_bad() }
        Unmanaged<MultiDriver>.fromOpaque(clientp).takeUnretainedValue().curlOpened(descriptor)
        return descriptor
    }

    /// `CURLOPT_CLOSESOCKETFUNCTION`, installed on every easy handle.
    static let closeSocketCallback: ccurl_closesocket_callback = { clientp, socket in
        guard let clientp else { return Glibc.close(socket) }
        Unmanaged<MultiDriver>.fromOpaque(clientp).takeUnretainedValue().curlClosing(socket)
        return 0
    }

    private func curlWantsSocket(_ socket: Int32, what: Int32) {
        var interest: SocketInterest = []
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { interest.insert(.read) }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { interest.insert(.write) }

        if self.flags(socket) & Self.ownedFlag != 0 {
            if what == CURL_POLL_REMOVE {
                // The connection goes back to curl's pool: disarm, keep the watch for its next request.
                if self.flags(socket) & Self.watchedFlag != 0 { self.scheduler.setInterest([], for: socket) }
            } else {
                self.setFlags(socket, self.flags(socket) | Self.watchedFlag)
                self.scheduler.setInterest(interest, for: socket)
            }
            return
        }

        if what == CURL_POLL_REMOVE {
            if let duplicate = self.duplicateByForeign.removeValue(forKey: socket) {
                self.foreignByDuplicate[duplicate] = nil
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
            self.foreignByDuplicate[duplicate] = socket
        }
        self.scheduler.setInterest(interest, for: duplicate)
    }

    private func curlOpened(_ socket: Int32) {
        self.setFlags(socket, Self.ownedFlag)
        self.counters.openSockets += 1
    }

    private func curlClosing(_ socket: Int32) {
        self.setFlags(socket, 0)
        self.counters.openSockets -= 1
        self.scheduler.close(socket: socket)
    }

    private func flags(_ socket: Int32) -> UInt8 {
        Int(socket) < self.socketFlags.count ? self.socketFlags[Int(socket)] : 0
    }

    private func setFlags(_ socket: Int32, _ flags: UInt8) {
        guard socket >= 0 else { return }
        if Int(socket) >= self.socketFlags.count {
            self.socketFlags.append(contentsOf: repeatElement(0, count: Int(socket) + 64 - self.socketFlags.count))
        }
        self.socketFlags[Int(socket)] = flags
    }

    // MARK: Transfers

    /// Keeps `transfer` alive until ``unregister(_:)``.
    func register(_ transfer: Transfer) {
        self.live[ObjectIdentifier(transfer)] = transfer
    }

    func unregister(_ transfer: Transfer) {
        if self.live.removeValue(forKey: ObjectIdentifier(transfer)) != nil {
            self.counters.transfersCompleted += 1
        }
    }

    /// A reset easy handle: a pooled one, or a new one (`nil` only when curl cannot allocate).
    func checkOutHandle() -> EasyHandle? {
        self.idleHandles.popLast() ?? EasyHandle()
    }

    /// Returns a handle that is no longer in the multi handle to the pool.
    func checkIn(_ easy: EasyHandle) {
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
        for transfer in Array(self.live.values) {
            transfer.engineDidShutDown()
        }
        self.live.removeAll()
        self.multi.cleanup()
        for duplicate in self.duplicateByForeign.values {
            self.scheduler.close(socket: duplicate)
        }
        self.duplicateByForeign.removeAll()
        self.foreignByDuplicate.removeAll()
        self.idleHandles.removeAll()
        self.scheduler.shutdown(completion)
    }

    /// Counters and holdings now. Runs on the context.
    var diagnostics: EngineDiagnostics {
        var snapshot = self.counters
        snapshot.liveTransfers = self.live.count
        snapshot.idleEasyHandles = self.idleHandles.count
        snapshot.foreignSocketWatches = self.duplicateByForeign.count
        snapshot.scheduler = self.scheduler.diagnostics
        return snapshot
    }
}
