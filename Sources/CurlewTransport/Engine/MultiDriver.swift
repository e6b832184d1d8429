internal import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// Drives the engine's curl multi handles: the curl I/O around ``EngineCore``, which holds every
/// decision. The scheduler's events and curl's callbacks go to the core as events; the driver
/// carries out the actions it answers (``execute(_:)``) and keeps the objects the core names by
/// number: the multi handles, the easy handle pool, the live transfers (which reach it through
/// ``TransferHost``).
///
/// Safety: `@unchecked Sendable` because all mutable state is confined to the scheduler's context
/// (asserted in debug builds); other threads touch only `scheduler` (immutable), to submit work. The
/// scheduler keeps the driver alive until its shutdown, after `curl_multi_cleanup`: curl's callbacks
/// never see a dangling pointer to it.
final class MultiDriver: TransferSchedulerEventHandler, TransferHost, @unchecked Sendable {
    let scheduler: any TransferScheduler
    // Confined to the context: dynamic exclusivity checks never find a conflict, and cost a lot.
    /// The multi handles, by the core's index (the others than the first opened when it asks).
    @exclusivity(unchecked) private var members: [Member] = []
    @exclusivity(unchecked) private var handles = EasyHandlePool()
    /// Transfers started and not finished (running or paused), kept alive here, by ``Transfer/id``.
    @exclusivity(unchecked) private var live: [UInt64: Transfer] = [:]
    @exclusivity(unchecked) private var core: EngineCore  // last: its size is known only at run time

    init(scheduler: any TransferScheduler, configuration: TransferEngine.Configuration) {
        self.scheduler = scheduler
        self.core = EngineCore(configuration: configuration)
        guard self.openMultiHandle() else { preconditionFailure("curl_multi_init failed: out of memory") }
        scheduler.bind(self)
    }

    /// One multi handle, and what its callbacks need to find the driver and say which handle called.
    /// `unowned(unsafe)`: the driver cleans the handles up (curl calls nothing after) before it goes.
    private final class Member {
        let multi: MultiHandle, index: Int
        unowned(unsafe) let driver: MultiDriver
        init(_ multi: MultiHandle, _ index: Int, _ driver: MultiDriver) {
            (self.multi, self.index, self.driver) = (multi, index, driver)
        }
    }

    /// Makes the next multi handle, with the engine's limits and the driver's callbacks.
    private func openMultiHandle() -> Bool {
        guard let multi = MultiHandle() else { return false }
        let configuration = self.core.configuration
        multi.set(CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maximumConnectionsPerHost)
        multi.set(CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maximumConnections)
        multi.set(CURLMOPT_MAXCONNECTS, configuration.effectiveIdleConnectionLimit)
        multi.set(CURLMOPT_PIPELINING, configuration.http2Multiplexing ? Int(CURLPIPE_MULTIPLEX) : 0)
        multi.set(CURLMOPT_MAX_CONCURRENT_STREAMS, configuration.maximumStreamsPerConnection)
        let member = Member(multi, self.members.count, self)
        multi.setCallbacks(socket: Self.socketCallback, timer: Self.timerCallback,
                           context: Unmanaged.passUnretained(member).toOpaque())
        self.members.append(member)
        return true
    }

    func socketBecameReady(_ socket: Int32, events: SocketEvents) {
        let action = self.core.socketReady(socket, events: events)
        if case .socketAction = action { self.enter { self.execute(action) } }
    }

    func timerFired() {
        let action = self.core.timerFired(at: .now)
        self.enter { self.execute(action) }
    }

    /// Runs `body`, which may call into curl, as one visit of the context (``EngineCore/Visit``);
    /// `deferringDueTimeouts`: see ``EngineCore/startedFromElsewhere()``.
    private func enter(deferringDueTimeouts: Bool = false, _ body: () -> Void) {
        self.scheduler.assertOnContext()
        guard self.core.visitBegins() else { return body() }
        body()
        if deferringDueTimeouts { self.core.startedFromElsewhere() }
        self.finishVisit()
    }

    private func finishVisit() { while let action = self.core.nextVisitAction(at: .now) { self.execute(action) } }

    /// Carries out what the core decided.
    private func execute(_ action: EngineCore.Action) {
        self.scheduler.assertOnContext()
        switch action {
        case .none: break
        case .socketAction(let handle, let socket, let events):
            self.members[handle].multi.socketAction(socket, events: Int32(events.rawValue))
            self.afterSocketAction(handle)
        case .runDueTimeouts(let handle): self.execute(.socketAction(handle: handle, socket: CURL_SOCKET_TIMEOUT, events: []))
        case .runEveryHandlesDueTimeouts: for handle in self.members.indices { self.execute(.runDueTimeouts(handle: handle)) }
        case .setInterest(let interest, let socket): self.scheduler.setInterest(interest, for: socket)
        case .close(let socket): self.scheduler.close(socket: socket)
        case .setTimer(let milliseconds): self.scheduler.setTimer(.after(milliseconds: milliseconds))
        case .expire(let id):
            if let transfer = self.live[id], transfer.deadline == self.core.expiringDeadline { transfer.deadlineExpired() }
        case .performAfterEvents: self.scheduler.perform { self.runWorkAfterEvents() }
        case .grant(let id, let performAfterEvents):
            self.live[id]?.slotGranted()
            if performAfterEvents { self.scheduler.perform { self.runWorkAfterEvents() } }
        }
    }

    private func afterSocketAction(_ handle: Int) {
        for action in self.core.sweepUnannouncedSockets() { self.execute(action) }
        while let finished = self.members[handle].multi.nextCompleted() {
            var pointer: UnsafeMutableRawPointer?
            guard ccurl_easy_getinfo_ptr(finished.easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else { continue }
            let transfer = Unmanaged<Transfer>.fromOpaque(pointer).takeUnretainedValue()
            transfer.easy?.finishedCleanly = finished.result == CURLE_OK
            transfer.curlDidFinish(finished.result)
        }
    }

    /// Runs `work` on the context after the work queued there now, with the work queued the same
    /// way meanwhile (``EngineCore/runAfterEvents(_:)``); at once after the driver's shutdown, which
    /// runs what is still queued.
    func runAfterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        guard !self.core.isShutDown else { return work() }
        self.execute(self.core.runAfterEvents(work))
    }

    private func runWorkAfterEvents() {
        var queued = self.core.takeWorkAfterEvents()
        for item in queued {
            switch item {
            case .work(let work): work()
            case .dueTimeouts: if self.core.visitOfDueLaterBegins() { self.finishVisit() }
            case .grantedStarts:
                self.enter {  // oldest first
                    var granted = self.core.takeGranted()
                    for id in granted where !self.core.isShutDown { self.live[id]?.startInGrantedSlot() }
                    self.core.grantedStarted(&granted)
                }
            }
        }
        self.core.workAfterEventsRan(&queued)
    }

    // MARK: curl's callbacks

    private static let socketCallback: ccurl_socket_callback = { _, socket, what, userp, _ in
        guard let userp else { return -1 }
        let member = Unmanaged<Member>.fromOpaque(userp).takeUnretainedValue(), driver = member.driver
        // `CURL_POLL_IN`, `_OUT` and `_INOUT` are `SocketInterest`'s bits; `CURL_POLL_REMOVE` is none.
        let interest = what == CURL_POLL_REMOVE ? nil : SocketInterest(rawValue: UInt8(truncatingIfNeeded: what) & 3)
        driver.execute(driver.core.curlWantsSocket(socket, interest: interest, handle: member.index))
        return 0
    }

    private static let timerCallback: ccurl_timer_callback = { _, milliseconds, userp in
        guard let userp else { return -1 }
        let request: TimerRequest = milliseconds < 0 ? .disarm : .after(milliseconds: milliseconds)
        let member = Unmanaged<Member>.fromOpaque(userp).takeUnretainedValue(), driver = member.driver
        driver.execute(driver.core.curlWantsTimer(request, handle: member.index, at: .now))
        return 0
    }

    /// `CURLOPT_OPENSOCKETFUNCTION` of every easy handle: curl gets a duplicate (see ``SocketLedger``).
    static let openSocketCallback: ccurl_opensocket_callback = { clientp, _, address in
        guard let clientp else { return ccurl_socket_bad() }
        let address = address.pointee, driver = Unmanaged<MultiDriver>.fromOpaque(clientp).takeUnretainedValue()
        let descriptor = socket(address.family, address.socktype | Int32(SOCK_CLOEXEC.rawValue), address.protocol)
        guard descriptor >= 0 else { return ccurl_socket_bad() }
        let (forCurl, action) = driver.core.curlOpened(descriptor)
        driver.execute(action)
        return forCurl ?? ccurl_socket_bad()
    }

    /// `CURLOPT_CLOSESOCKETFUNCTION` of every easy handle.
    static let closeSocketCallback: ccurl_closesocket_callback = { clientp, socket in
        guard let clientp else { return Glibc.close(socket) }
        let driver = Unmanaged<MultiDriver>.fromOpaque(clientp).takeUnretainedValue()
        driver.execute(driver.core.curlCloses(socket))
        return 0
    }

    // MARK: Transfers

    func visit(_ transfer: Transfer, deferringDueTimeouts: Bool, _ work: @escaping @Sendable (Transfer) -> Void) {
        self.scheduler.perform { self.enter(deferringDueTimeouts: deferringDueTimeouts) { work(transfer) } }
    }

    func transferRuns(_ transfer: Transfer, until deadline: ContinuousClock.Instant?) -> Bool {
        self.live[transfer.id] = transfer
        if let deadline { self.core.track(deadline, for: transfer.id) }
        return !self.core.isShutDown
    }

    func transferWantsSlot(_ transfer: Transfer, on host: ConnectionAdmission.Host, multiplexes: Bool) -> Bool {
        self.core.transferWantsSlot(transfer.id, on: host, multiplexes: multiplexes)
    }

    func attach(to host: ConnectionAdmission.Host, multiplexes: Bool,
                configure: (EasyHandle, UnsafeMutableRawPointer) throws(TransferError) -> Void) throws(TransferError) -> EasyHandle {
        guard let easy = self.handles.checkOut() else { throw TransferError(.unknown, "curl_easy_init failed.") }
        do throws(TransferError) {
            try configure(easy, Unmanaged.passUnretained(self).toOpaque())
            let index = self.core.placeTransfer(to: host, multiplexes: multiplexes)
            guard index < self.members.count || self.openMultiHandle() else {
                self.core.multiHandleNotOpened()
                throw TransferError(.unknown, "curl_multi_init failed: out of memory")
            }
            let code = self.members[index].multi.add(easy)
            guard code == CURLM_OK else {
                self.core.transferDetached(from: index, host: host, finished: false)
                throw TransferError(.unknown, "curl_multi_add_handle failed: \(String(cString: curl_multi_strerror(code)))")
            }
            easy.placement = (index, self.members.count > 1 ? host : nil)  // the host only where there is a choice
            return easy
        } catch {
            self.handles.checkIn(easy)
            throw error
        }
    }

    func transferLeft(_ transfer: Transfer, handle: EasyHandle?, slot: EngineCore.Slot) {
        if let easy = handle {
            if let (index, host) = easy.placement {
                self.members[index].multi.remove(easy)
                self.core.transferDetached(from: index, host: host, finished: easy.finishedCleanly)
                (easy.placement, easy.finishedCleanly) = (nil, false)
            }
            self.handles.checkIn(easy)
        }
        self.execute(self.core.transferLeft(transfer.id, slot: slot))
    }

    func transferEnded(_ transfer: Transfer) {
        let counted = self.live.removeValue(forKey: transfer.id) != nil
        self.core.transferEnded(counted: counted, liveTransfers: self.live.count) { self.live[$0.transferID]?.deadline == $0.deadline }
    }

    func host(_ host: ConnectionAdmission.Host, answeredIn version: TransferMetrics.HTTPVersion) {
        self.core.host(host, answeredIn: version)
    }

    /// Cancels every live transfer, closes every connection, then shuts the scheduler down (on the context).
    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.scheduler.assertOnContext()
        guard !self.core.isShutDown else { return completion() }
        self.core.shutDown()
        self.enter { for transfer in Array(self.live.values) { transfer.engineDidShutDown() } }
        self.live.removeAll()
        self.runWorkAfterEvents()
        for member in self.members { member.multi.cleanup() }
        for action in self.core.releaseAllSockets() { self.execute(action) }
        self.handles.removeAll()
        self.scheduler.shutdown(completion)
    }

    /// Counters and holdings now. Runs on the context.
    var diagnostics: EngineDiagnostics {
        self.scheduler.assertOnContext()
        return self.core.diagnostics(liveTransfers: self.live.count, idleEasyHandles: self.handles.count,
                                     scheduler: self.scheduler.diagnostics)
    }
}
