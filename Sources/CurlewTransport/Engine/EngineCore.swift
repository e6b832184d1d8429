/// The engine's decisions as one value: which sockets the engine owns and watches, when the
/// scheduler's one timer must fire, which transfers wait for a connection slot, which multi handle
/// takes a transfer, and what a visit of the context does before it ends.
///
/// ``MultiDriver`` tells the core what happened — a socket is ready, the timer fired, curl wants a
/// socket watched or its timer set, a transfer wants a slot or left one, a visit's body returned —
/// and carries out the ``Action`` it answers. The core makes no system call but those its
/// ``SocketLedger`` is given (``SocketLedger/System``), reads no clock (the time comes with the
/// event) and calls into no transfer, so every heuristic is a test without sockets.
///
/// It composes the values that hold one decision each — ``SocketLedger``, ``TimerCoalescer``,
/// ``ConnectionAdmission``, ``HostProtocols``, ``MultiHandlePlacement`` — and keeps what lies
/// between them: the state of the current visit (``Visit``), the due timeouts left until after the
/// events in hand, the transfers given a slot to start together, the work queued behind the events
/// in hand, and the engine's counters.
///
/// Answers allocate nothing on the hot path: one small enum per event, pulled one at a time where
/// an event leads to several (``nextVisitAction(at:)``), and lists that keep their buffers. An
/// ``Action`` holds no `ContinuousClock.Instant` (a resilient type, whose values the runtime lays
/// out), so the compiler knows its layout; ``timer``, which holds instants, is the core's last
/// stored property, so that every other one sits at a fixed offset.
struct EngineCore {
    /// What the driver must do.
    enum Action: Equatable {
        /// Nothing.
        case none
        /// `curl_multi_socket_action` on multi handle `handle` for curl's `socket`, ready for `events`
        /// (whose bits are `CURL_CSELECT_IN`, `_OUT` and `_ERR`'s).
        case socketAction(handle: Int, socket: Int32, events: SocketEvents)
        /// `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` on multi handle `handle`: its due timeouts.
        case runDueTimeouts(handle: Int)
        /// The due timeouts of every multi handle: the timer fired early (it is re-armed lazily, see
        /// ``TimerCoalescer``), and curl finds out cheaply that nothing is due.
        case runEveryHandlesDueTimeouts
        /// The scheduler watches `socket` (a descriptor of the engine's) for exactly `interest`.
        case setInterest(SocketInterest, socket: Int32)
        /// The scheduler stops watching `socket` and closes it once no event for it can come.
        case close(Int32)
        /// The scheduler's timer fires in `milliseconds` (0: as soon as possible).
        case setTimer(milliseconds: Int)
        /// Transfer `transferID` is timed out, unless it finished, paused or moved its deadline since
        /// (its deadline is no longer ``expiringDeadline``).
        case expire(transferID: UInt64)
        /// One `perform` on the context runs the work queued behind the events in hand
        /// (``takeWorkAfterEvents()``), which was empty until now.
        case performAfterEvents
        /// Transfer `id` holds the slot it waited for; it starts after the events in hand, with the
        /// others granted meanwhile (``takeGranted()``). `performAfterEvents` as for
        /// ``performAfterEvents``.
        case grant(UInt64, performAfterEvents: Bool)
    }

    /// Where the context stands in a visit of the engine.
    ///
    /// A visit is one entry of the context into the engine: a readiness event, the timer, a
    /// transfer's command, work queued behind the events in hand. curl's timer requests wait until
    /// its body has returned; then the visit runs curl's due timeouts itself (curl asks for 0 ms
    /// whenever a transfer is added), times out the transfers past their own deadline, and sets the
    /// timer once. A visit begun inside another joins it.
    enum Visit: Equatable {
        /// No visit: curl's timer requests set the timer at once.
        case outside
        /// The visit's body runs.
        case body
        /// The visit of the due timeouts left for later runs them, `next` the next to run.
        case dueLater(next: Int)
        /// The body has returned; curl's due timeouts run, `done` rounds so far.
        case rounds(done: Int)
        /// The transfers past their own deadline are timed out.
        case deadlines
    }

    /// Work queued behind the events in hand, run in order by one `perform`.
    enum AfterEvents {
        /// A caller's work (``MultiDriver/runAfterCurrentEvents(_:)``).
        case work(@Sendable () -> Void)
        /// The visit that runs the due timeouts left for later (``visitOfDueLaterBegins()``).
        case dueTimeouts
        /// The transfers granted a slot start (``takeGranted()``).
        case grantedStarts
    }

    /// Where a transfer stands with its host's connection slots.
    enum Slot {
        /// Neither holding nor waiting (not started, paused, or finished).
        case none
        /// In the host's queue.
        case waiting(ConnectionAdmission.Host)
        /// Handed to curl, or about to be.
        case holding(ConnectionAdmission.Host)
    }

    /// The limits the engine was made with.
    let configuration: TransferEngine.Configuration
    private var sockets: SocketLedger
    private var admission = ConnectionAdmission()
    private var placement: MultiHandlePlacement
    private var protocols = HostProtocols()
    /// Which multi handle announced each socket, by curl's descriptor (0 until one did; kept only
    /// while there is more than one handle).
    private var handleBySocket: [UInt8] = []
    /// Waiting transfers that may share an HTTP/2 connection: their slot limit is higher.
    private var multiplexingWaiters: Set<UInt64> = []
    private(set) var visit = Visit.outside
    /// Whether the current visit leaves curl's due timeouts until after the events in hand.
    private var defersDueTimeouts = false
    /// The multi handles whose due timeouts wait for the events in hand; the list being run.
    private var dueLater: [Int] = []
    private var dueLaterRunning: [Int] = []
    /// Transfers granted a slot during the events in hand, to start after them; an emptied list
    /// with room, swapped in when they start.
    private var granted: [UInt64] = []
    private var grantedSpare: [UInt64] = []
    /// Work queued behind the events in hand, in order; an emptied list with room.
    private var afterEvents: [AfterEvents] = []
    private var afterEventsSpare: [AfterEvents] = []
    private(set) var isShutDown = false
    private var counters = EngineDiagnostics()
    /// The deadline of the transfer the last ``Action/expire(transferID:)`` names.
    private(set) var expiringDeadline: ContinuousClock.Instant?
    private var timer = TimerCoalescer()  // last: see the type's comment

    /// How many times one visit runs curl's due timeouts itself, per multi handle, rather than arm
    /// a 0 ms timer.
    static let roundsPerHandle = 8

    init(configuration: TransferEngine.Configuration, system: SocketLedger.System = .live) {
        self.configuration = configuration
        self.sockets = SocketLedger(system: system)
        // curl counts a total connection limit per multi handle: with one set, one handle keeps it.
        let handles = configuration.maximumConnections > 0
            ? 1 : min(configuration.maximumMultiHandles, Int(UInt8.max))
        self.placement = MultiHandlePlacement(transfersPerHandle: configuration.transfersPerMultiHandle,
                                              maximumHandles: handles)
    }

    /// The engine shuts down: no more of curl's timeouts run, the timer is left alone, and work
    /// queued behind the events in hand would wait for nothing (the driver runs it at once).
    mutating func shutDown() {
        self.isShutDown = true
    }

    // MARK: Scheduler events

    /// The watched descriptor `watched` is ready for `events`.
    mutating func socketReady(_ watched: Int32, events: SocketEvents) -> Action {
        guard let socket = self.sockets.curlDescriptor(forWatched: watched) else { return .none }
        self.counters.socketActions += 1
        let index = Int(socket)
        let handle = index < self.handleBySocket.count ? Int(self.handleBySocket[index]) : 0
        return .socketAction(handle: handle, socket: socket, events: events)
    }

    /// The scheduler's timer fired at `now`.
    mutating func timerFired(at now: ContinuousClock.Instant) -> Action {
        self.timer.timerFired()
        self.counters.timerFirings += 1
        guard let handle = self.timer.takeDueCurlHandle(at: now) else { return .runEveryHandlesDueTimeouts }
        return .runDueTimeouts(handle: handle)
    }

    // MARK: curl's requests

    /// The curl of multi handle `handle` wants its timer (`CURLMOPT_TIMERFUNCTION`). In a visit,
    /// only its last request matters: the timer is looked at when the visit ends.
    mutating func curlWantsTimer(_ request: TimerRequest, handle: Int, at now: ContinuousClock.Instant) -> Action {
        self.counters.timerUpdates += 1
        self.timer.curlAsked(request, handle: handle, at: now)
        guard case .outside = self.visit else { return .none }
        return self.rearmTimer(at: now) ?? .none
    }

    /// The curl of multi handle `handle` wants `socket` watched for `interest`, or no longer
    /// watched (`nil`: `CURL_POLL_REMOVE`).
    mutating func curlWantsSocket(_ socket: Int32, interest: SocketInterest?, handle: Int) -> Action {
        if self.placement.handleCount > 1, socket >= 0 {
            let index = Int(socket)
            if index >= self.handleBySocket.count {
                self.handleBySocket.append(contentsOf: repeatElement(0, count: index + 1 - self.handleBySocket.count))
            }
            self.handleBySocket[index] = UInt8(truncatingIfNeeded: handle)
        }
        return Self.action(self.sockets.curlWants(socket, interest: interest))
    }

    /// The engine created `socket` for curl (`CURLOPT_OPENSOCKETFUNCTION`): the duplicate curl gets
    /// (`nil`: none could be made), and what to do about a socket curl closed behind the engine's back.
    mutating func curlOpened(_ socket: Int32) -> (forCurl: Int32?, action: Action) {
        let (forCurl, stale) = self.sockets.opened(socket)
        return (forCurl, Self.action(stale))
    }

    /// curl is done with `socket` (`CURLOPT_CLOSESOCKETFUNCTION`).
    mutating func curlCloses(_ socket: Int32) -> Action {
        Self.action(self.sockets.curlCloses(socket))
    }

    /// After a socket action: the sockets curl closed before it announced them, to be closed.
    /// Empty, and free, unless a connection waits for its first socket callback.
    mutating func sweepUnannouncedSockets() -> [Action] {
        guard self.sockets.hasUnannounced else { return [] }
        return self.sockets.sweepUnannounced().map { Self.action($0) }
    }

    /// At shutdown, after curl's cleanup: whatever curl closed behind the engine's back and never
    /// reported, and the foreign duplicates.
    mutating func releaseAllSockets() -> [Action] {
        self.sockets.releaseAll().map { Self.action($0) }
    }

    private static func action(_ command: SocketLedger.Command?) -> Action {
        switch command {
        case .setInterest(let interest, let socket): .setInterest(interest, socket: socket)
        case .close(let socket): .close(socket)
        case nil: .none
        }
    }

    // MARK: Visits

    /// A visit of the context begins: `false` when one is under way, which this one joins.
    mutating func visitBegins() -> Bool {
        guard case .outside = self.visit else { return false }
        self.visit = .body
        return true
    }

    /// The current visit's transfer was started from another thread: its due timeouts wait until
    /// the context has handled the events in hand (``AfterEvents/dueTimeouts``).
    ///
    /// Such a transfer is handed to curl at once, but curl starts it on its next timeout. Left until
    /// after the events in hand, the responses already waiting on the context complete (and their
    /// hand-offs leave) before its request is written, and the transfers started meanwhile go out in
    /// one round. Starts on the context (from a delegate callback) keep the immediate round. Why,
    /// with the measurements: decision 0013.
    mutating func startedFromElsewhere() {
        self.defersDueTimeouts = true
    }

    /// What the visit does next, now that its body has returned, at `now`: run curl's due timeouts
    /// (at most ``roundsPerHandle`` rounds per multi handle), time out transfers past their
    /// deadline, set the timer; `nil` when the visit is over. Called until it answers `nil`.
    mutating func nextVisitAction(at now: ContinuousClock.Instant) -> Action? {
        while true {
            switch self.visit {
            case .outside:
                return nil
            case .body:
                self.visit = .rounds(done: 0)
                if self.defersDueTimeouts {
                    self.defersDueTimeouts = false
                    if self.leaveDueTimeoutsForLater(at: now) { return .performAfterEvents }
                }
            case .dueLater(let next):
                if next < self.dueLaterRunning.count, !self.isShutDown {
                    self.visit = .dueLater(next: next + 1)
                    return .runDueTimeouts(handle: self.dueLaterRunning[next])
                }
                self.dueLaterRunning.removeAll(keepingCapacity: true)
                self.defersDueTimeouts = false  // this visit runs curl's further requests itself
                self.visit = .rounds(done: 0)
            case .rounds(let done):
                if done < Self.roundsPerHandle * self.placement.handleCount, !self.isShutDown,
                   let handle = self.timer.takeDueCurlHandle(at: now) {
                    self.visit = .rounds(done: done + 1)
                    return .runDueTimeouts(handle: handle)
                }
                self.visit = .deadlines
            case .deadlines:
                if let entry = self.timer.popDueDeadline(at: now) {
                    self.expiringDeadline = entry.deadline
                    return .expire(transferID: entry.transferID)
                }
                self.expiringDeadline = nil
                self.visit = .outside
                return self.rearmTimer(at: now)
            }
        }
    }

    /// Takes the curl deadlines due by `now` for the visit behind the events in hand; whether that
    /// visit must be queued.
    private mutating func leaveDueTimeoutsForLater(at now: ContinuousClock.Instant) -> Bool {
        var queued = false
        while !self.isShutDown, let handle = self.timer.takeDueCurlHandle(at: now) {
            if self.dueLater.isEmpty { queued = self.queue(.dueTimeouts) }
            if !self.dueLater.contains(handle) { self.dueLater.append(handle) }
        }
        return queued
    }

    /// The visit of the due timeouts left for later begins (its ``AfterEvents/dueTimeouts`` came):
    /// `false` when there are none, or a visit is under way.
    mutating func visitOfDueLaterBegins() -> Bool {
        guard case .outside = self.visit, !self.dueLater.isEmpty else { return false }
        swap(&self.dueLater, &self.dueLaterRunning)  // the emptied list takes the next ones
        self.visit = .dueLater(next: 0)
        return true
    }

    /// What the scheduler's timer must be armed for at `now`, if it must change (never after shutdown).
    private mutating func rearmTimer(at now: ContinuousClock.Instant) -> Action? {
        guard !self.isShutDown, let milliseconds = self.timer.rearm(at: now) else { return nil }
        self.counters.timerChanges += 1
        if milliseconds == 0 { self.counters.timerArmsForNow += 1 }
        return .setTimer(milliseconds: milliseconds)
    }

    // MARK: Work after the events in hand

    /// Queues `work` behind the events in hand (see ``MultiDriver/runAfterCurrentEvents(_:)``).
    mutating func runAfterEvents(_ work: @escaping @Sendable () -> Void) -> Action {
        self.queue(.work(work)) ? .performAfterEvents : .none
    }

    /// Appends `item`; whether the queue was empty, so that a `perform` must run it.
    private mutating func queue(_ item: AfterEvents) -> Bool {
        self.afterEvents.append(item)
        return self.afterEvents.count == 1
    }

    /// The queued work, in order, to run now; give the list back with ``workAfterEventsRan(_:)``.
    /// Work queued while it runs goes to a new list, with its own `perform`.
    mutating func takeWorkAfterEvents() -> [AfterEvents] {
        var taken: [AfterEvents] = []
        swap(&taken, &self.afterEventsSpare)  // taken out first, so each list has one owner
        swap(&taken, &self.afterEvents)
        return taken
    }

    /// Takes back the list ``takeWorkAfterEvents()`` gave, emptied, its buffer kept for the next.
    mutating func workAfterEventsRan(_ list: inout [AfterEvents]) {
        list.removeAll(keepingCapacity: true)
        swap(&list, &self.afterEventsSpare)
    }

    // MARK: Connection slots

    /// Transfer `id` asks for a connection slot on `host` for its next attempt; `multiplexes`: it
    /// may share an HTTP/2 connection. `true`: it holds one, and is handed to curl now; `false`: it
    /// waits for ``Action/grant(_:performAfterEvents:)``.
    mutating func transferWantsSlot(_ id: UInt64, on host: ConnectionAdmission.Host, multiplexes: Bool) -> Bool {
        let limit = self.slotLimit(on: host, multiplexes: multiplexes)
        guard self.admission.request(id, for: host, limit: limit) == .waiting else { return true }
        if multiplexes { self.multiplexingWaiters.insert(id) }
        return false
    }

    /// Transfer `id` let its `slot` go (it finished, failed, was cancelled or paused). A slot given
    /// back goes to the oldest transfer waiting for the host, if the slots then held are within
    /// that transfer's limit.
    ///
    /// The transfer granted the slot starts after the events in hand, together with the others
    /// granted meanwhile (``Action/grant(_:performAfterEvents:)``), so that their requests leave back
    /// to back rather than one between each pair of reads of a batch of ready sockets. Why, with the
    /// measurements: decision 0013.
    mutating func transferLeft(_ id: UInt64, slot: Slot) -> Action {
        switch slot {
        case .none:
            return .none
        case .waiting:
            self.admission.withdraw(id)
            if !self.multiplexingWaiters.isEmpty { self.multiplexingWaiters.remove(id) }
            return .none
        case .holding(let host):
            let plain = self.slotLimit(on: host, multiplexes: false)
            let shared = self.slotLimit(on: host, multiplexes: true)
            guard let next = Self.release(host, from: &self.admission, plain: plain, shared: shared,
                                          multiplexing: self.multiplexingWaiters) else { return .none }
            if !self.multiplexingWaiters.isEmpty { self.multiplexingWaiters.remove(next) }
            self.granted.append(next)
            let firstOfBatch = self.granted.count == 1
            return .grant(next, performAfterEvents: firstOfBatch ? self.queue(.grantedStarts) : false)
        }
    }

    private static func release(_ host: ConnectionAdmission.Host, from admission: inout ConnectionAdmission,
                                plain: Int?, shared: Int?, multiplexing: Set<UInt64>) -> UInt64? {
        admission.release(host) { id in
            plain != shared && !multiplexing.isEmpty && multiplexing.contains(id) ? shared : plain
        }
    }

    /// The transfers granted a slot since the last batch, oldest first, to start now; give the list
    /// back with ``grantedStarted(_:)``.
    mutating func takeGranted() -> [UInt64] {
        var taken: [UInt64] = []
        swap(&taken, &self.grantedSpare)
        swap(&taken, &self.granted)
        return taken
    }

    /// Takes back the list ``takeGranted()`` gave, emptied, its buffer kept for the next batch.
    mutating func grantedStarted(_ list: inout [UInt64]) {
        list.removeAll(keepingCapacity: true)
        swap(&list, &self.grantedSpare)
    }

    /// The most slots on `host` while a transfer that `multiplexes` takes one: the per-host limit,
    /// times the streams per connection while the host's connections may be shared; `nil`: no limit.
    private func slotLimit(on host: ConnectionAdmission.Host, multiplexes: Bool) -> Int? {
        let perHost = self.configuration.maximumConnectionsPerHost
        guard perHost > 0 else { return nil }
        let shares = multiplexes && self.configuration.http2Multiplexing
            && !self.protocols.answersOneRequestPerConnection(host)
        return shares ? perHost * max(1, self.configuration.maximumStreamsPerConnection) : perHost
    }

    /// `host` answered a transfer that could have shared a connection in `version` (see
    /// ``HostProtocols``).
    mutating func host(_ host: ConnectionAdmission.Host, answeredIn version: TransferMetrics.HTTPVersion) {
        self.protocols.note(version, from: host)
    }

    /// Slots held for `host`, and transfers waiting for one anywhere.
    func heldSlots(for host: ConnectionAdmission.Host) -> Int { self.admission.heldSlots(for: host) }
    var waitingTransfers: Int { self.admission.waitingCount }

    // MARK: Multi handles

    /// The multi handle for a transfer to `host`, counted as attached to it. An index equal to
    /// ``multiHandleCount`` before the call is a new handle, for the driver to open.
    ///
    /// A transfer that `multiplexes` (it may share an HTTP/2 connection) goes to the first handle:
    /// the engine admits many such transfers per connection slot and leaves their connections to
    /// curl's per-host limit, which holds per multi handle only. They stay there when their host
    /// turns out to answer in HTTP/1.x: the transfers admitted before the engine knew are in the
    /// first handle, with their connections, and moving later ones to other handles opens new
    /// connections beside the idle ones there (decision 0012).
    mutating func placeTransfer(to host: ConnectionAdmission.Host, multiplexes: Bool) -> Int {
        self.placement.place(host, pinned: multiplexes && self.configuration.http2Multiplexing)
    }

    /// The new multi handle ``placeTransfer(to:multiplexes:)`` asked for could not be made.
    mutating func multiHandleNotOpened() {
        self.placement.abandonLastHandle()
    }

    /// A transfer to `host` left multi handle `index`, `finished` with its response or not.
    mutating func transferDetached(from index: Int, host: ConnectionAdmission.Host?, finished: Bool) {
        self.placement.left(index, host: host, finished: finished)
    }

    /// How many multi handles are open.
    var multiHandleCount: Int { self.placement.handleCount }

    // MARK: The transfers' own deadlines

    /// Transfer `id` must be timed out at `deadline` unless it finished, paused or moved its
    /// deadline by then (``Action/expire(transferID:)``, when a visit ends).
    mutating func track(_ deadline: ContinuousClock.Instant, for id: UInt64) {
        self.timer.track(deadline, for: id)
    }

    /// A transfer ended: once the tracked deadlines outnumber the `liveTransfers`, those no longer
    /// `isCurrent` are dropped. `counted`: it was live, and counts as completed.
    mutating func transferEnded(counted: Bool, liveTransfers: Int, isCurrent: (DeadlineQueue.Entry) -> Bool) {
        if counted { self.counters.transfersCompleted += 1 }
        self.timer.dropStaleDeadlines(liveTransfers: liveTransfers, isCurrent: isCurrent)
    }

    /// Tracked deadlines, current or stale.
    var trackedDeadlineCount: Int { self.timer.trackedDeadlineCount }

    // MARK: Diagnostics

    /// The counters, with what the core holds now and what the driver does.
    func diagnostics(liveTransfers: Int, idleEasyHandles: Int, scheduler: SchedulerDiagnostics) -> EngineDiagnostics {
        var snapshot = self.counters
        snapshot.liveTransfers = liveTransfers
        snapshot.idleEasyHandles = idleEasyHandles
        snapshot.scheduler = scheduler
        snapshot.openSockets = self.sockets.connectionCount
        snapshot.foreignSocketWatches = self.sockets.foreignWatchCount
        snapshot.transfersWaitingForConnection = self.admission.waitingCount
        snapshot.multiHandles = self.placement.handleCount
        return snapshot
    }
}
