import CurlewTransport
import HTTPTypes
import Logging

/// A manager's request log, as a monitor: each attempt's start and end at `.debug`. The manager uses
/// one while its logger is at `.debug` or below; curl's wire trace (`.trace`) goes through the
/// ``wireTracer(for:)`` it hands to requests.
struct LoggingMonitor: EventMonitor {
    let logger: Logger

    func request(_ request: MonitoredRequest, didStart attempt: RequestAttempt) {
        self.logger.debug("\(Self.summary(attempt.head)) started")
    }

    func request(
        _ request: MonitoredRequest, didComplete attempt: RequestAttempt,
        with result: Result<TransferResponse, TransferError>, after duration: Duration?
    ) {
        switch result {
        case .success(let response):
            self.logger.debug("\(Self.summary(attempt.head)) \(response.head.status.code) in \(Self.milliseconds(duration)) ms",
                              metadata: ["curlew.bytes": "\(response.body?.count ?? 0)",
                                         "curlew.http": "\(response.metrics.httpVersion.rawValue)"])
        case .failure(let error):
            self.logger.debug("\(Self.summary(attempt.head)) failed after \(Self.milliseconds(duration)) ms: \(error)")
        }
    }

    /// A tracer that logs curl's wire events (credentials redacted) at `.trace` to `logger`, or `nil`
    /// below `.trace`, when curl is then not asked to trace at all.
    static func wireTracer(for logger: Logger) -> WireTracer? {
        guard logger.logLevel <= .trace else { return nil }
        return WireTracer { transferID, event in
            logger.trace("\(event)", metadata: ["curlew.transfer": "\(transferID)"])
        }
    }

    /// `GET https://…`, for log lines.
    private static func summary(_ head: HTTPRequest) -> String {
        "\(head.method.rawValue) \(head.scheme ?? "?")://\(head.authority ?? "?")\(head.path ?? "")"
    }

    private static func milliseconds(_ duration: Duration?) -> String {
        guard let duration else { return "0" }
        let (seconds, attoseconds) = duration.components
        return String(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
