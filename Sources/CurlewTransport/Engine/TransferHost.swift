/// What a ``Transfer`` asks of the engine that runs it: the whole of the engine a transfer sees.
///
/// A transfer gets onto the engine's context (``visit(_:deferringDueTimeouts:_:)``), says that it
/// runs and when it ended, asks for a connection slot, has its easy handle added to curl and
/// taken back, and tells what HTTP version its host answered in. Everything else — sockets, the
/// timer, which multi handle, when a waiting transfer's turn comes — is the engine's decision
/// (``EngineCore``). The engine calls back only to start a transfer whose slot came
/// (``Transfer/slotGranted()``, ``Transfer/startInGrantedSlot()``), to complete one curl reported
/// done or whose deadline passed, and at shutdown.
///
/// Every member but ``scheduler`` and ``visit(_:deferringDueTimeouts:_:)`` is called on the context.
protocol TransferHost: AnyObject, Sendable {
    /// The scheduler whose context runs the engine.
    var scheduler: any TransferScheduler { get }

    /// Runs `work` with `transfer` on the context, after the work submitted before it, as one visit
    /// of the engine. `deferringDueTimeouts`: curl's timeouts due when `work` returns wait until the
    /// context has handled the events in hand (for a transfer started from another thread, see
    /// ``EngineCore/startedFromElsewhere()``). `work` gets the transfer, so that a command that
    /// captures nothing else costs no allocation of its own.
    func visit(_ transfer: Transfer, deferringDueTimeouts: Bool, _ work: @escaping @Sendable (Transfer) -> Void)

    /// `transfer` runs (it starts, or resumes) and is kept alive until ``transferEnded(_:)``; it is
    /// timed out at `deadline` unless it finished, paused or moved its deadline by then. `false`:
    /// the engine has shut down.
    func transferRuns(_ transfer: Transfer, until deadline: ContinuousClock.Instant?) -> Bool

    /// Asks for a connection slot on `host` for `transfer`'s next attempt; `multiplexes`: it may
    /// share an HTTP/2 connection. `true`: it holds one; `false`: it waits for
    /// ``Transfer/slotGranted()``.
    func transferWantsSlot(_ transfer: Transfer, on host: ConnectionAdmission.Host, multiplexes: Bool) -> Bool

    /// An easy handle (pooled or new) set up by `configure`, which gets the handle and the context
    /// its socket callbacks need, and added to curl for a transfer to `host`; curl starts it on its
    /// next timeout. A handle `configure` failed on goes back to the pool.
    func attach(to host: ConnectionAdmission.Host, multiplexes: Bool,
                configure: (EasyHandle, UnsafeMutableRawPointer) throws(TransferError) -> Void) throws(TransferError) -> EasyHandle

    /// `transfer` let go of `handle` (taken out of curl, back to the pool; curl closes its connection
    /// if a response was under way) and of `slot` (to the next transfer waiting for it).
    func transferLeft(_ transfer: Transfer, handle: EasyHandle?, slot: EngineCore.Slot)

    /// `transfer` completed: the engine lets it go.
    func transferEnded(_ transfer: Transfer)

    /// `host` answered a transfer that could have shared a connection in `version` (see ``HostProtocols``).
    func host(_ host: ConnectionAdmission.Host, answeredIn version: TransferMetrics.HTTPVersion)
}
