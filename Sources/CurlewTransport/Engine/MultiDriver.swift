import Foundation
internal import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// Drives the engine's curl multi handles from a scheduler's events: the engine's insides, and the
/// glue between curl's callbacks, the ``TransferScheduler`` and the value types that hold the
/// decisions — ``SocketLedger`` (which sockets the engine owns, and by which descriptor curl knows
/// them), ``TimerCoalescer`` (when the scheduler's one timer must fire), ``EasyHandlePool``,
/// ``ConnectionAdmission`` (which transfers wait for a connection slot) and
/// ``MultiHandlePlacement`` (which multi handle takes a transfer: one, until a load of hundreds of
/// connections makes libcurl's connection walks expensive).
///
/// curl tells the driver which sockets to watch and when to wake it (`CURLMOPT_SOCKETFUNCTION`,
/// `CURLMOPT_TIMERFUNCTION`); the driver passes that on to its scheduler, and turns the scheduler's
/// readiness and timer events into `curl_multi_socket_action` calls, after which it completes the
/// transfers curl reports done (`curl_multi_info_read`).
///
/// Every visit of the context — a readiness event, the timer, or a ``Transfer`` command submitted
/// with `perform` — is one ``enter(_:)``: curl's timer requests are coalesced until curl has
/// returned, curl's "call me again at once" is honoured in the same visit (or, for a transfer
/// started from another thread or given its turn in the per-host queue, in a visit queued behind the
/// events in hand), and transfers past their own deadline are timed out before the visit ends.
///
/// Safety: `@unchecked Sendable` because all mutable state is confined to the scheduler's context
/// (asserted at every entry in debug builds); only `scheduler` (immutable) is touched from other
/// threads, to submit work.
final class MultiDriver: TransferSchedulerEventHandler, @unchecked Sendable {
    let scheduler: any TransferScheduler
    /// The multi handles, by index: the first is made with the driver, the others when
    /// ``placement`` first asks for them.
    @exclusivity(unchecked) private var members: [Member] = []

    // Confined to the context, one thread at a time (asserted in debug builds): Swift's dynamic
    // exclusivity checks on these class properties can never find a conflict, and are turned off
    // (`@exclusivity(unchecked)`) because they cost thousands of instructions per request.
    @exclusivity(unchecked) private var sockets = SocketLedger()
    @exclusivity(unchecked) private var timer = TimerCoalescer()
    @exclusivity(unchecked) private var handles = EasyHandlePool()
    @exclusivity(unchecked) private var admission = ConnectionAdmission()
    @exclusivity(unchecked) private var placement: MultiHandlePlacement
    @exclusivity(unchecked) private var protocols = HostProtocols()
    /// Which multi handle announced each socket, by curl's descriptor (0 until one did).
    @exclusivity(unchecked) private var handleBySocket: [UInt8] = []
    private let configuration: TransferEngine.Configuration
    /// Transfers started and not finished (running or paused), kept alive here, by ``Transfer/id``.
    @exclusivity(unchecked) private var live: [UInt64: Transfer] = [:]

    private(set) var isShutDown = false
    @exclusivity(unchecked) private var counters = EngineDiagnostics()
    /// Whether the context is inside ``enter(_:)``: curl's timer requests wait until it ends.
    @exclusivity(unchecked) private var isEntered = false
    /// Work to run once the context has handled the events in hand (``runAfterCurrentEvents(_:)``).
    @exclusivity(unchecked) private var deferred: [@Sendable () -> Void] = []
    /// An emptied list with room, swapped with ``deferred`` when it runs (no allocation per batch).
    @exclusivity(unchecked) private var deferredSpare: [@Sendable () -> Void] = []
    /// Transfers given a connection slot during the events in hand, to start after them.
    @exclusivity(unchecked) private var granted: [Transfer] = []
    /// An emptied list with room, swapped with ``granted`` when they start.
    @exclusivity(unchecked) private var grantedSpare: [Transfer] = []
    /// Whether the current entry leaves curl's due timeouts until after the events in hand
    /// (``deferDueTimeouts()``).
    @exclusivity(unchecked) private var defersDueTimeouts = false
    /// The multi handles whose due timeouts wait for the events in hand to be handled.
    @exclusivity(unchecked) private var deferredTimeoutHandles: [Int] = []
    /// Whether the context is in the entry that runs them.
    @exclusivity(unchecked) private var isRunningDeferredTimeouts = false
    /// How many times one entry runs curl's due timeouts itself rather than arming a 0 ms timer.
    private static let immediateRoundsPerEntry = 8

    init(scheduler: any TransferScheduler, configuration: TransferEngine.Configuration) {
        self.scheduler = scheduler
        self.configuration = configuration
        // curl counts a total connection limit per multi handle: with one set, one handle keeps it.
        let handles = configuration.maximumConnections > 0 ? 1 : min(configuration.maximumMultiHandles, Int(UInt8.max))
        self.placement = MultiHandlePlacement(transfersPerHandle: configuration.transfersPerMultiHandle,
                                              maximumHandles: handles)
        guard self.openMultiHandle() else {
            preconditionFailure("curl_multi_init failed: out of memory")
        }
        scheduler.bind(self)
    }

    /// One multi handle, and what its callbacks need to find the driver and say which handle called.
    ///
    /// Safety: `unowned(unsafe)` because the driver owns its members and cleans their handles up
    /// (after which curl calls nothing) before it goes.
    private final class Member {
        let multi: MultiHandle
        let index: Int
        unowned(unsafe) let driver: MultiDriver

        init(multi: MultiHandle, index: Int, driver: MultiDriver) {
            self.multi = multi
            self.index = index
            self.driver = driver
        }

        var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    }

    /// Makes the next multi handle, with the engine's limits and the driver's callbacks.
    private func openMultiHandle() -> Bool {
        guard let multi = MultiHandle() else { return false }
        let configuration = self.configuration
        multi.set(CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maximumConnectionsPerHost)
        multi.set(CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maximumConnections)
        multi.set(CURLMOPT_MAXCONNECTS, configuration.effectiveIdleConnectionLimit)
        multi.set(CURLMOPT_PIPELINING, configuration.http2Multiplexing ? Int(CURLPIPE_MULTIPLEX) : 0)
        multi.set(CURLMOPT_MAX_CONCURRENT_STREAMS, configuration.maximumStreamsPerConnection)
        let member = Member(multi: multi, index: self.members.count, driver: self)
        multi.setCallbacks(socket: Self.socketCallback, timer: Self.timerCallback, context: member.pointer)
        self.members.append(member)
        return true
    }

    /// The driver as curl's user data for the easy handles' socket callbacks. The scheduler keeps the
    /// driver alive until its shutdown, which comes after `curl_multi_cleanup`, so curl never sees
    /// a dangling pointer.
    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: Scheduler events

    func socketBecameReady(_ socket: Int32, events: SocketEvents) {
        self.scheduler.assertOnContext()
        guard let curlSocket = self.sockets.curlDescriptor(forWatched: socket) else { return }
        var mask: Int32 = 0
        if events.contains(.read) { mask |= CURL_CSELECT_IN }
        if events.contains(.write) { mask |= CURL_CSELECT_OUT }
        if events.contains(.error) { mask |= CURL_CSELECT_ERR }
        let handle = Int(curlSocket) < self.handleBySocket.count ? Int(self.handleBySocket[Int(curlSocket)]) : 0
        self.enter {
            self.counters.socketActions += 1
            self.members[handle].multi.socketAction(curlSocket, events: mask)
            self.afterSocketAction(handle)
        }
    }

    func timerFired() {
        self.scheduler.assertOnContext()
        self.timer.timerFired()
        self.enter {
            self.counters.timerFirings += 1
            guard let first = self.timer.takeDueCurlHandle(at: .now) else {
                // Early (the timer is re-armed lazily): nothing is due, which curl finds out cheaply.
                for handle in self.members.indices { self.runDueTimeouts(handle) }
                return
            }
            self.runDueTimeouts(first)
        }
    }

    /// Runs `body`, which may call into curl, as one entry of the context into the engine.
    ///
    /// curl may ask for its timer several times while it works; only its last request matters, so
    /// the scheduler's timer is looked at once, when the entry ends. When curl's deadline has already
    /// come (it asks for 0 ms when a transfer was just added), the entry runs curl's due timeouts
    /// itself right after `body`, unless `body` asked for them to wait (``deferDueTimeouts()``).
    /// Before it ends, transfers whose own deadline has passed are completed as timed out. Nested
    /// calls join the outer entry.
    func enter(_ body: () -> Void) {
        self.scheduler.assertOnContext()
        guard !self.isEntered else {
            body()
            return
        }
        self.isEntered = true
        body()
        if self.defersDueTimeouts {
            self.defersDueTimeouts = false
            if !self.isRunningDeferredTimeouts { self.takeDueTimeoutsForLater() }
        }
        var rounds = 0
        while rounds < Self.immediateRoundsPerEntry * self.members.count, !self.isShutDown,
              let handle = self.timer.takeDueCurlHandle(at: .now) {
            rounds += 1
            self.runDueTimeouts(handle)
        }
        if self.timer.hasDueDeadline(at: .now) { self.expireDeadlines() }
        self.isEntered = false
        self.applyTimer()
    }

    /// Leaves curl's timeouts that are due when the current entry ends until the context has
    /// handled the events in hand; then they run in one entry of their own, together with those
    /// left the same way meanwhile. Called inside an entry.
    ///
    /// For a transfer started from another thread (an operation's `start()` on its queue's thread):
    /// it is handed to curl at once, but curl starts it on its next timeout. Run at the end of each
    /// start's own entry, every such start paid a round of curl's timeouts and sent its request
    /// while the responses already waiting on the context were not read yet. Left until after the
    /// events in hand, the responses complete (and their hand-offs leave) first, and the transfers
    /// started meanwhile go out in one round. Measured on this project's 2-vCPU machines with
    /// `RequestOperation` and the manager on dispatch, 16 and 128 in flight: 3–25 % more requests
    /// per second (`Docs/Benchmarks.md`). Transfers started on the context (from a delegate
    /// callback) are not left: deferring those too made the run-loop epoll engine 9–13 % slower at
    /// 16 in flight.
    func deferDueTimeouts() {
        self.scheduler.assertOnContext()
        self.defersDueTimeouts = true
    }

    private func takeDueTimeoutsForLater() {
        let now = ContinuousClock.now
        while !self.isShutDown, let handle = self.timer.takeDueCurlHandle(at: now) {
            if self.deferredTimeoutHandles.isEmpty {
                self.runAfterCurrentEvents { self.runDeferredTimeouts() }
            }
            if !self.deferredTimeoutHandles.contains(handle) { self.deferredTimeoutHandles.append(handle) }
        }
    }

    /// Runs the timeouts ``takeDueTimeoutsForLater()`` took, as one entry; curl's further immediate
    /// requests run in it as in any entry.
    private func runDeferredTimeouts() {
        guard !self.deferredTimeoutHandles.isEmpty else { return }
        var handles: [Int] = []
        swap(&handles, &self.deferredTimeoutHandles)  // taken, so that nothing is copied
        self.isRunningDeferredTimeouts = true
        self.enter {
            for handle in handles where !self.isShutDown { self.runDueTimeouts(handle) }
        }
        self.isRunningDeferredTimeouts = false
        handles.removeAll(keepingCapacity: true)
        self.deferredTimeoutHandles = handles  // empty: none can be left while the entry runs
    }

    /// Runs `work` on the context after the work queued there now — the other sockets of the same
    /// readiness batch, the other queued events — and with the work deferred the same way meanwhile.
    /// After the driver's shutdown, which runs what is still deferred, `work` runs at once.
    ///
    /// The operation layer defers each response's hand-off to a processing queue this way: one
    /// event often completes a transfer while more events wait, and queuing the hand-offs together
    /// wakes the processing queue's thread once for all of them, instead of once per response in
    /// between curl's work, a wake-up whose system call the network thread pays.
    func runAfterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        self.scheduler.assertOnContext()
        guard !self.isShutDown else { return work() }
        self.deferred.append(work)
        if self.deferred.count == 1 {
            self.scheduler.perform { self.runDeferred() }
        }
    }

    private func runDeferred() {
        guard !self.deferred.isEmpty else { return }
        // Take the spare out first, so that each list has one owner and appending never copies.
        var work: [@Sendable () -> Void] = []
        swap(&work, &self.deferredSpare)
        swap(&work, &self.deferred)
        for item in work { item() }
        work.removeAll(keepingCapacity: true)
        self.deferredSpare = work
    }

    private func applyTimer() {
        guard !self.isShutDown, let milliseconds = self.timer.rearm(at: .now) else { return }
        self.counters.timerChanges += 1
        if milliseconds == 0 { self.counters.timerArmsForNow += 1 }
        self.scheduler.setTimer(.after(milliseconds: milliseconds))
    }

    private func runDueTimeouts(_ handle: Int) {
        self.members[handle].multi.socketAction(CURL_SOCKET_TIMEOUT, events: 0)
        self.afterSocketAction(handle)
    }

    private func afterSocketAction(_ handle: Int) {
        if self.sockets.hasUnannounced {
            for command in self.sockets.sweepUnannounced() { self.perform(command) }
        }
        self.completeFinishedTransfers(handle)
    }

    private func completeFinishedTransfers(_ handle: Int) {
        while let finished = self.members[handle].multi.nextCompleted() {
            var pointer: UnsafeMutableRawPointer?
            guard ccurl_easy_getinfo_ptr(finished.easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else {
                continue
            }
            let transfer = Unmanaged<Transfer>.fromOpaque(pointer).takeUnretainedValue()
            transfer.easy?.finishedCleanly = finished.result == CURLE_OK
            transfer.curlDidFinish(finished.result)
        }
    }

    /// Carries out what the socket ledger decided.
    private func perform(_ command: SocketLedger.Command) {
        switch command {
        case .setInterest(let interest, let socket): self.scheduler.setInterest(interest, for: socket)
        case .close(let socket): self.scheduler.close(socket: socket)
        }
    }

    // MARK: curl's callbacks

    private static let socketCallback: ccurl_socket_callback = { _, socket, what, userp, _ in
        guard let userp else { return -1 }
        let member = Unmanaged<Member>.fromOpaque(userp).takeUnretainedValue()
        member.driver.curlWantsSocket(socket, what: what, handle: member.index)
        return 0
    }

    private static let timerCallback: ccurl_timer_callback = { _, milliseconds, userp in
        guard let userp else { return -1 }
        let request: TimerRequest = milliseconds < 0 ? .disarm : .after(milliseconds: milliseconds)
        let member = Unmanaged<Member>.fromOpaque(userp).takeUnretainedValue()
        member.driver.curlWantsTimer(request, handle: member.index)
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

    private func curlWantsTimer(_ request: TimerRequest, handle: Int) {
        self.scheduler.assertOnContext()
        self.counters.timerUpdates += 1
        self.timer.curlAsked(request, handle: handle, at: .now)
        if !self.isEntered { self.applyTimer() }
    }

    private func curlWantsSocket(_ socket: Int32, what: Int32, handle: Int) {
        self.scheduler.assertOnContext()
        if self.members.count > 1, socket >= 0 {
            let index = Int(socket)
            if index >= self.handleBySocket.count {
                self.handleBySocket.append(contentsOf: repeatElement(0, count: index + 1 - self.handleBySocket.count))
            }
            self.handleBySocket[index] = UInt8(truncatingIfNeeded: handle)
        }
        let interest: SocketInterest?
        switch what {
        case CURL_POLL_REMOVE: interest = nil
        case CURL_POLL_IN: interest = .read
        case CURL_POLL_OUT: interest = .write
        case CURL_POLL_INOUT: interest = [.read, .write]
        default: interest = []
        }
        if let command = self.sockets.curlWants(socket, interest: interest) { self.perform(command) }
    }

    /// Keeps the new socket and returns curl's duplicate of it (`CURL_SOCKET_BAD` if none can be made).
    private func curlOpened(_ socket: Int32) -> Int32 {
        self.scheduler.assertOnContext()
        let (forCurl, stale) = self.sockets.opened(socket)
        if let stale { self.perform(stale) }
        return forCurl ?? ccurl_socket_bad()
    }

    private func curlClosing(_ socket: Int32) {
        self.scheduler.assertOnContext()
        if let command = self.sockets.curlCloses(socket) { self.perform(command) }
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
        self.timer.dropStaleDeadlines(liveTransfers: self.live.count) { self.isCurrent($0) }
    }

    /// Completes `transfer` as timed out at `deadline` unless it has finished or paused by then;
    /// the timer is armed for it when the current entry ends.
    func track(_ transfer: Transfer, deadline: ContinuousClock.Instant) {
        self.timer.track(deadline, for: transfer.id)
    }

    private func isCurrent(_ entry: DeadlineQueue.Entry) -> Bool {
        self.live[entry.transferID]?.deadline == entry.deadline
    }

    private func expireDeadlines() {
        let now = ContinuousClock.now
        while let entry = self.timer.popDueDeadline(at: now) {
            guard let transfer = self.live[entry.transferID], transfer.deadline == entry.deadline else { continue }
            transfer.deadlineExpired()
        }
    }

    /// A reset easy handle: a pooled one, or a new one (`nil` only when curl cannot allocate).
    func checkOutHandle() -> EasyHandle? {
        self.handles.checkOut()
    }

    /// Returns a handle that is no longer in the multi handle to the pool.
    func checkIn(_ easy: EasyHandle) {
        self.handles.checkIn(easy)
    }

    // MARK: Connection slots

    /// Asks for a connection slot on `host` for `transfer`'s next attempt: `true` when it holds one
    /// and may be handed to curl now; `false` when it waits, until ``Transfer/slotGranted()``.
    func requestSlot(for transfer: Transfer, on host: ConnectionAdmission.Host, multiplexes: Bool) -> Bool {
        self.admission.request(transfer.id, for: host, limit: self.slotLimit(on: host, multiplexes: multiplexes)) == .admitted
    }

    /// Gives a slot on `host` back; the oldest transfer waiting for it, if any, takes it, and starts
    /// once the context has handled the events in hand, together with the others granted meanwhile.
    ///
    /// A slot comes free when a transfer ends, typically while the context goes through a batch of
    /// ready sockets. Started at once, the next transfer's request went out between the reads of
    /// that batch, one at a time, and the server, idle again in between, had to be woken for each
    /// (the waker, this thread, pays the wake-up): with 10,000 GETs queued for 64 connections to
    /// nginx, its worker slept 0.7–0.8 times per request, against 0.1–0.16 when the transfers were
    /// started after the batch, as callers' `start()` calls are. Started together, the requests
    /// leave back to back.
    func releaseSlot(_ host: ConnectionAdmission.Host) {
        let next = self.admission.release(host) { id in
            self.slotLimit(on: host, multiplexes: self.live[id]?.mayMultiplex(on: host) ?? false)
        }
        guard let next, let transfer = self.live[next] else { return }
        transfer.slotGranted()
        self.granted.append(transfer)
        if self.granted.count == 1 {
            self.runAfterCurrentEvents { self.enter { self.startGranted() } }
        }
    }

    /// Starts the transfers granted a slot since the last call (see ``releaseSlot(_:)``), oldest first.
    private func startGranted() {
        var transfers: [Transfer] = []
        swap(&transfers, &self.grantedSpare)
        swap(&transfers, &self.granted)
        for transfer in transfers { transfer.startInGrantedSlot() }
        transfers.removeAll(keepingCapacity: true)
        self.grantedSpare = transfers
    }

    /// The most slots on `host` while a transfer that `multiplexes` (may share an HTTP/2
    /// connection) takes one: the per-host limit, times the streams per connection when the host's
    /// connections may be shared; `nil` for no limit.
    private func slotLimit(on host: ConnectionAdmission.Host, multiplexes: Bool) -> Int? {
        let perHost = self.configuration.maximumConnectionsPerHost
        guard perHost > 0 else { return nil }
        return self.sharesConnections(multiplexes, on: host)
            ? perHost * max(1, self.configuration.maximumStreamsPerConnection) : perHost
    }

    /// Whether a transfer that `multiplexes` will probably share a connection to `host`: HTTP/2
    /// multiplexing is on, and the host's last answer did not come in HTTP/1.x (``HostProtocols``).
    private func sharesConnections(_ multiplexes: Bool, on host: ConnectionAdmission.Host) -> Bool {
        multiplexes && self.configuration.http2Multiplexing && !self.protocols.answersOneRequestPerConnection(host)
    }

    /// Notes the HTTP version `host` answered a transfer in that could have shared a connection.
    func note(_ version: TransferMetrics.HTTPVersion, from host: ConnectionAdmission.Host) {
        self.protocols.note(version, from: host)
    }

    /// Takes a transfer that waits for a slot out of the queue.
    func withdrawFromSlotQueue(_ transfer: Transfer) {
        self.admission.withdraw(transfer.id)
    }

    /// Adds `easy`, for a transfer to `host`, to a multi handle (see ``MultiHandlePlacement``);
    /// curl starts it on its next timer or socket action.
    ///
    /// A transfer that `multiplexes` (it may share an HTTP/2 connection) goes to the first handle:
    /// the engine admits many such transfers per connection slot and leaves their connections to
    /// curl's per-host limit, which holds per multi handle only. They stay there when their host
    /// turns out to answer in HTTP/1.x (``HostProtocols``): the transfers admitted before the
    /// engine knew are in the first handle, with their connections, and moving later ones to other
    /// handles opens new connections beside the idle ones there. Measured with 1,000 connections
    /// allowed and 1,000 HTTPS GETs to nginx in flight: 1,743 connections instead of 1,011 for
    /// 42,000 requests, for 5–15 % more throughput.
    func attach(_ easy: EasyHandle, host: ConnectionAdmission.Host, multiplexes: Bool) throws(TransferError) {
        let index = self.placement.place(host, pinned: multiplexes && self.configuration.http2Multiplexing)
        if index == self.members.count, !self.openMultiHandle() {
            self.placement.abandonLastHandle()
            throw TransferError(.unknown, "curl_multi_init failed: out of memory")
        }
        let code = self.members[index].multi.add(easy)
        guard code == CURLM_OK else {
            self.placement.left(index, host: host, finished: false)
            throw TransferError(.unknown, "curl_multi_add_handle failed: \(String(cString: curl_multi_strerror(code)))")
        }
        // The host is kept only where there is a choice of handle (strings retained per request).
        easy.placement = (index, self.members.count > 1 ? host : nil)
    }

    /// Removes `easy` from its multi handle; curl closes its connection if a response was under way.
    func detach(_ easy: EasyHandle) {
        guard let (index, host) = easy.placement else { return }
        easy.placement = nil
        self.members[index].multi.remove(easy)
        self.placement.left(index, host: host, finished: easy.finishedCleanly)
        easy.finishedCleanly = false
    }

    // MARK: Lifecycle

    /// Cancels every live transfer, cleans the multi handle up (closing pooled connections), then
    /// shuts the scheduler down. Runs on the context.
    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.scheduler.assertOnContext()
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
        self.runDeferred()
        for member in self.members {
            member.multi.cleanup()  // applyTimer does nothing once shut down: the scheduler is done.
        }
        // Whatever curl closed behind our back and never reported, and the foreign duplicates.
        for command in self.sockets.releaseAll() { self.perform(command) }
        self.handles.removeAll()
        self.scheduler.shutdown(completion)
    }

    /// Counters and holdings now. Runs on the context.
    var diagnostics: EngineDiagnostics {
        self.scheduler.assertOnContext()
        var snapshot = self.counters
        snapshot.liveTransfers = self.live.count
        snapshot.openSockets = self.sockets.connectionCount
        snapshot.idleEasyHandles = self.handles.count
        snapshot.foreignSocketWatches = self.sockets.foreignWatchCount
        snapshot.transfersWaitingForConnection = self.admission.waitingCount
        snapshot.multiHandles = self.members.count
        snapshot.scheduler = self.scheduler.diagnostics
        return snapshot
    }
}
