import CoreMetrics
import CurlewTransport
import HTTPTypes
import Metrics

/// The names of the metrics a ``RequestOperationManager`` reports through swift-metrics.
///
/// Nothing is recorded anywhere unless the application bootstraps a metrics backend
/// (`MetricsSystem.bootstrap`) before making the manager, or passes a factory to it; until then
/// every metric is swift-metrics' no-op.
///
/// | Label | Kind | Dimensions | Counts |
/// | --- | --- | --- | --- |
/// | `curlew_requests_total` | counter | `method` | transfers completed, successfully or not |
/// | `curlew_request_failures_total` | counter | `code` (a `TransferError/Code` raw value) | transfers that failed |
/// | `curlew_requests_in_flight` | meter | | transfers started and not completed |
/// | `curlew_connections_opened_total` | counter | | new connections the final attempts opened |
/// | `curlew_connections_reused_total` | counter | | final attempts that reused a pooled connection |
/// | `curlew_request_duration_seconds` | timer (nanoseconds) | `method` | from start to completion, redirects, waits and pauses included |
/// | `curlew_connections_open` | meter | | connections the engine has open, in use or pooled (sampled) |
/// | `curlew_transfers_waiting_for_connection` | meter | | transfers waiting for a connection slot to their host (sampled) |
///
/// Each attempt is a transfer. A response with an error status (a 404) is a completed transfer, not a
/// failure: status validation belongs to the response serializers. The two pool meters are read from
/// the manager's engine once a second while a metrics backend is bootstrapped (never without one),
/// so that they cost nothing per request.
public enum RequestMetricsLabels {
    /// Transfers completed, by method.
    public static let requests = "curlew_requests_total"
    /// Transfers that failed, by `TransferError/Code`.
    public static let failures = "curlew_request_failures_total"
    /// Transfers started and not completed.
    public static let inFlight = "curlew_requests_in_flight"
    /// Connections opened by final attempts.
    public static let connectionsOpened = "curlew_connections_opened_total"
    /// Final attempts on a pooled connection.
    public static let connectionsReused = "curlew_connections_reused_total"
    /// Time from start to completion, by method.
    public static let duration = "curlew_request_duration_seconds"
    /// Connections the engine has open, in use or pooled.
    public static let connectionsOpen = "curlew_connections_open"
    /// Transfers waiting for a connection slot to their host.
    public static let transfersWaiting = "curlew_transfers_waiting_for_connection"
}

/// A manager's metrics, as a monitor of its attempts: metric objects made once from one factory, one
/// per standard method and per error code, so that recording a request allocates no metric object
/// (and finds its method's by position, without hashing).
struct RequestMetrics: EventMonitor {
    let factory: any MetricsFactory
    let inFlight: Meter
    let connectionsOpened: Counter
    let connectionsReused: Counter
    /// One per method of ``methods``, in its order.
    private let requests: [Counter]
    /// One per method of ``methods``, in its order.
    private let durations: [CoreMetrics.Timer]
    private let failures: [TransferError.Code: Counter]
    /// The methods with metric objects made in advance.
    private static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]

    init(factory: any MetricsFactory) {
        self.factory = factory
        self.inFlight = Meter(label: RequestMetricsLabels.inFlight, dimensions: [], factory: factory)
        self.connectionsOpened = Counter(label: RequestMetricsLabels.connectionsOpened, dimensions: [], factory: factory)
        self.connectionsReused = Counter(label: RequestMetricsLabels.connectionsReused, dimensions: [], factory: factory)
        self.requests = Self.methods.map { Self.requestCounter($0, factory) }
        self.durations = Self.methods.map { Self.durationTimer($0, factory) }
        self.failures = Dictionary(uniqueKeysWithValues: TransferError.Code.allCases.map { code in
            (code, Counter(label: RequestMetricsLabels.failures, dimensions: [("code", code.rawValue)], factory: factory))
        })
    }

    /// Whether `factory` records anything: swift-metrics' no-op factory does not, and a manager then
    /// has no metrics monitor at all.
    static func records(_ factory: any MetricsFactory) -> Bool {
        !(factory is NOOPMetricsHandler)
    }

    func request(_ request: MonitoredRequest, didStart attempt: RequestAttempt) {
        self.inFlight.increment()
    }

    func request(
        _ request: MonitoredRequest, didComplete attempt: RequestAttempt,
        with result: Result<TransferResponse, TransferError>, after duration: Duration?
    ) {
        self.completed(result, method: attempt.head.method, after: duration)
    }

    /// Records a completed transfer; `elapsed` is `nil` when it was never started.
    func completed(_ result: Result<TransferResponse, TransferError>, method: HTTPRequest.Method, after elapsed: Duration?) {
        let index = Self.methods.firstIndex(of: method)
        (index.map { self.requests[$0] } ?? Self.requestCounter(method, self.factory)).increment()
        if let elapsed {
            self.inFlight.decrement()
            let (seconds, attoseconds) = elapsed.components
            (index.map { self.durations[$0] } ?? Self.durationTimer(method, self.factory))
                .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
        switch result {
        case .success(let response):
            if response.metrics.connectionsOpened > 0 {
                self.connectionsOpened.increment(by: response.metrics.connectionsOpened)
            } else {
                self.connectionsReused.increment()
            }
        case .failure(let error):
            self.failures[error.code]?.increment()
        }
    }

    private static func requestCounter(_ method: HTTPRequest.Method, _ factory: any MetricsFactory) -> Counter {
        Counter(label: RequestMetricsLabels.requests, dimensions: [("method", method.rawValue)], factory: factory)
    }

    private static func durationTimer(_ method: HTTPRequest.Method, _ factory: any MetricsFactory) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: RequestMetricsLabels.duration, dimensions: [("method", method.rawValue)], factory: factory)
    }
}
