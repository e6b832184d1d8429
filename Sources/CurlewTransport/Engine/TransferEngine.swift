import Foundation
import Synchronization

/// Runs HTTP transfers on one libcurl multi handle, driven by a ``TransferScheduler``.
///
/// The engine owns curl's multi handle; every curl call for it happens on the scheduler's context,
/// which the scheduler provides (a serial queue for `DispatchScheduler`, a network thread's run
/// loop for `RunLoopScheduler`). Connections are pooled and reused across the engine's transfers,
/// HTTP/2 streams are multiplexed on one connection, and easy handles are reused.
///
/// ```swift
/// let engine = TransferEngine(scheduler: DispatchScheduler())
/// let response = try await engine.execute(TransferRequest(url: URL(string: "http://127.0.0.1:8080/")!))
/// print(response.head.status, response.body?.count ?? 0)
/// await engine.shutdown()
/// ```
///
/// Call ``shutdown()`` when done: it cancels what is still running, closes pooled connections and
/// releases the scheduler. An engine released without it shuts down on its own, asynchronously,
/// cancelling its transfers.
public final class TransferEngine: Sendable {
    /// Limits of one engine's connection pool.
    public struct Configuration: Sendable, Hashable {
        /// The most connections to one host (`CURLMOPT_MAX_HOST_CONNECTIONS`); more transfers wait
        /// for a free one, in the engine, first come first served. HTTPS transfers, which may share
        /// an HTTP/2 connection, wait only beyond this many connections' worth of streams
        /// (``maximumStreamsPerConnection``), until their host has answered in HTTP/1.x: from then
        /// on they are counted one per connection too. 0: no limit.
        public var maximumConnectionsPerHost: Int = 16
        /// The most connections in all (`CURLMOPT_MAX_TOTAL_CONNECTIONS`). 0: no limit. An engine
        /// with such a limit drives one multi handle, whatever ``maximumMultiHandles`` says, since
        /// curl counts the limit per handle.
        public var maximumConnections: Int = 0
        /// How many connections the pool keeps open (`CURLMOPT_MAXCONNECTS`). `nil`: four times the
        /// per-host limit, at least 64 (256 without a per-host limit).
        ///
        /// Left to itself, curl sizes the pool at four times the number of transfers in the multi
        /// handle *at that moment*, which drops whenever finished transfers leave before new ones
        /// come: it then closes connections that the next request would have reused.
        public var maximumIdleConnections: Int?
        /// Whether HTTP/2 transfers to one host share a connection as streams.
        public var http2Multiplexing: Bool = true
        /// The most streams on one HTTP/2 connection (`CURLMOPT_MAX_CONCURRENT_STREAMS`).
        public var maximumStreamsPerConnection: Int = 100
        /// How many transfers one libcurl multi handle takes before the engine opens another.
        ///
        /// libcurl 7.88 walks every connection of a multi handle twice per request (looking for an
        /// idle one to reuse, and when the transfer leaves), so beyond a few hundred connections
        /// those walks dominate; with several multi handles, each has its own connections and the
        /// walks stay short. A transfer goes to a handle that probably has an idle connection to its
        /// host, so connections are still reused. The per-host limit counts the transfers of all
        /// handles (the engine keeps it); the idle pool (``maximumIdleConnections``) is per handle.
        /// Transfers that may share an HTTP/2 connection (HTTPS, or prior knowledge) all stay in the
        /// first handle, which keeps their connections within the per-host limit. Below this many
        /// transfers in flight an engine uses one multi handle.
        ///
        /// ```swift
        /// var configuration = TransferEngine.Configuration()
        /// configuration.maximumConnectionsPerHost = 1_024  // a load test against one host
        /// configuration.transfersPerMultiHandle = 256      // the default: four handles at 1,024
        /// let engine = TransferEngine(scheduler: DispatchScheduler(), configuration: configuration)
        /// ```
        public var transfersPerMultiHandle: Int = 256
        /// The most libcurl multi handles the engine spreads its transfers over (1: never more than
        /// one; see ``transfersPerMultiHandle``). Beyond this many times
        /// ``transfersPerMultiHandle`` transfers in flight, the least busy handle takes the next.
        public var maximumMultiHandles: Int = 8

        /// Creates the default configuration.
        public init() {}

        /// The pool size actually used: ``maximumIdleConnections``, or the default it describes.
        var effectiveIdleConnectionLimit: Int {
            if let limit = self.maximumIdleConnections { return max(1, limit) }
            return self.maximumConnectionsPerHost > 0 ? max(64, 4 * self.maximumConnectionsPerHost) : 256
        }
    }

    let driver: MultiDriver
    /// The budget the retries of ``execute(_:retry:)`` share (see ``RetryBudget``): the defaults,
    /// 20 % of the first attempts of the last 10 seconds plus 10.
    public let retryBudget = RetryBudget()
    private let isShutDown = Locked(false)
    private static let nextTransferID = Atomic<UInt64>(1)

    /// The scheduler whose context runs this engine.
    public var scheduler: any TransferScheduler { self.driver.scheduler }

    /// Creates an engine on `scheduler`, which it binds; a scheduler serves one engine.
    public init(scheduler: any TransferScheduler, configuration: Configuration = Configuration()) {
        self.driver = MultiDriver(scheduler: scheduler, configuration: configuration)
    }

    deinit {
        if !self.isShutDown.withLock({ $0 }) {
            let driver = self.driver
            driver.scheduler.perform { driver.shutdown {} }
        }
    }

    /// Makes a transfer for `request`; nothing happens until ``Transfer/start()``.
    ///
    /// - Parameters:
    ///   - request: what to send and where the body goes.
    ///   - delegate: told of the transfer's events on the engine's context, and of its end exactly
    ///     once. The transfer keeps it until then.
    public func makeTransfer(_ request: TransferRequest, delegate: (any TransferDelegate)? = nil) -> Transfer {
        let id = Self.nextTransferID.add(1, ordering: .relaxed).oldValue
        return Transfer(request: request, delegate: delegate, driver: self.driver, id: id)
    }

    /// Cancels every unfinished transfer, closes all connections and releases the scheduler.
    /// Transfers started afterwards fail with ``TransferError/Code/cancelled``.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            self.shutdown { continuation.resume() }
        }
    }

    /// Like ``shutdown()``, calling `completion` (on any thread) when done.
    public func shutdown(completion: @escaping @Sendable () -> Void) {
        self.isShutDown.withLock { $0 = true }
        let driver = self.driver
        driver.scheduler.perform { driver.shutdown(completion) }
    }

    /// Runs `work` on the context after the events queued there now, when called on the context
    /// (from a delegate's callback); at once anywhere else. See ``MultiDriver/runAfterCurrentEvents(_:)``.
    package func runAfterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        guard self.driver.scheduler.isOnContext else { return work() }
        self.driver.runAfterCurrentEvents(work)
    }

    /// What the engine holds and has done, read on its context.
    public func diagnostics() async -> EngineDiagnostics {
        await withCheckedContinuation { (continuation: CheckedContinuation<EngineDiagnostics, Never>) in
            let driver = self.driver
            driver.scheduler.perform { continuation.resume(returning: driver.diagnostics) }
        }
    }
}

/// A snapshot of an engine's holdings and counters, for tests, leak checks and lessons.
public struct EngineDiagnostics: Sendable, Hashable {
    /// Transfers started and not finished (running or paused).
    public var liveTransfers = 0
    /// Transfers finished since the engine was made.
    public var transfersCompleted = 0
    /// Transfers the engine holds back until their host has a free connection slot (beyond
    /// ``TransferEngine/Configuration/maximumConnectionsPerHost``), not yet handed to curl.
    public var transfersWaitingForConnection = 0
    /// libcurl multi handles the engine has opened (see
    /// ``TransferEngine/Configuration/transfersPerMultiHandle``).
    public var multiHandles = 0
    /// Easy handles waiting in the pool for reuse.
    public var idleEasyHandles = 0
    /// Connection sockets curl has open (in use or pooled).
    public var openSockets = 0
    /// Sockets curl opened itself (the resolver's) being watched through a duplicate.
    public var foreignSocketWatches = 0
    /// `curl_multi_socket_action` calls for socket readiness since the engine was made.
    public var socketActions = 0
    /// Timer expiries since the engine was made.
    public var timerFirings = 0
    /// Times curl asked for its timer to be re-armed or disarmed since the engine was made.
    public var timerUpdates = 0
    /// Times the scheduler's timer was actually changed (curl's updates within one event coalesced).
    public var timerChanges = 0
    /// Of ``timerChanges``, the times the timer was armed to fire at once (0 ms): each is a round
    /// trip through the scheduler for work that was already due. curl asks for 0 ms whenever a
    /// transfer is added; the engine runs that in the same visit of the context (or, for a transfer
    /// started from another thread or given its turn in the per-host queue, in a visit it queues
    /// behind the events in hand), so this stays near zero however many transfers start.
    public var timerArmsForNow = 0
    /// What the scheduler holds.
    public var scheduler = SchedulerDiagnostics()

    /// Creates empty diagnostics.
    public init() {}
}
