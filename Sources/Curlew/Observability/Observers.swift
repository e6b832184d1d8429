import CurlewTransport
import Logging
import Synchronization
import Tracing

/// What observes a manager's requests, fixed until the manager's logger changes: its monitors as one
/// (yours, then its log while the logger is at `.debug`, then its metrics while a metrics backend
/// records), and its tracer unless it is the no-op one.
///
/// A manager holds one only when something observes: with none — no monitor given, the default
/// logger, no metrics backend, no tracer — its requests carry no observation at all, which is how the
/// async path costs nothing for observability that is not used.
final class Observers: Sendable {
    let monitor: (any EventMonitor)?
    let tracer: (any Tracer)?
    /// Numbers the observed requests of the process.
    private static let nextID = Atomic<UInt64>(1)

    private init(monitor: (any EventMonitor)?, tracer: (any Tracer)?) {
        self.monitor = monitor
        self.tracer = tracer
    }

    /// The observers of a manager with these settings, or `nil` when nothing observes.
    static func make(monitors: [any EventMonitor], logger: Logger, metrics: RequestMetrics?, tracer: (any Tracer)?) -> Observers? {
        var all = monitors
        if logger.logLevel <= .debug { all.append(LoggingMonitor(logger: logger)) }
        if let metrics { all.append(metrics) }
        let monitor: (any EventMonitor)? = all.count > 1 ? CompositeEventMonitor(all) : all.first
        let tracer = Self.recording(tracer)
        guard monitor != nil || tracer != nil else { return nil }
        return Observers(monitor: monitor, tracer: tracer)
    }

    /// `tracer`, unless it is swift-distributed-tracing's no-op tracer (what `InstrumentationSystem.tracer`
    /// is until a tracer is bootstrapped).
    static func recording(_ tracer: (any Tracer)?) -> (any Tracer)? {
        guard let tracer, !(tracer is NoOpTracer) else { return nil }
        return tracer
    }

    /// Begins observing `request` (as the manager prepared it) in `dialect`: its monitors hear that it
    /// began; its attempts are to run on the returned transport, over `base`.
    func begin(_ request: TransferRequest, dialect: MonitoredRequest.Dialect, over base: any TransferRunning,
               engine: TransferEngine?) -> InstrumentedTransport {
        let id = Self.nextID.add(1, ordering: .relaxed).oldValue
        let monitored = MonitoredRequest(id: id, head: request.head, dialect: dialect)
        let transport = InstrumentedTransport(monitored, monitor: self.monitor, tracer: self.tracer, base: base, engine: engine)
        self.monitor?.requestDidBegin(monitored)
        return transport
    }
}
