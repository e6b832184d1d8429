import CurlewSerialization
import CurlewTransport
import HTTPTypes
import Tracing

/// The client span of one request, after OpenTelemetry's HTTP client conventions: started when the
/// request begins, an event per attempt and per retry, ended when the request finishes.
///
/// One span for the request rather than one per attempt: it lasts what the caller waited for (the
/// value delivered, or the failure), and every attempt's `traceparent` names it, so the server's spans
/// of all attempts are its children. curl follows redirects inside one attempt, so a span per HTTP
/// exchange could not be made anyway; the attempts' outcomes are events on it.
///
/// Not thread-safe by itself: its ``InstrumentedTransport`` calls it with its lock held.
struct RequestSpan {
    private let span: any Span
    /// The status of the latest response head, for `error.type` when the request fails after it.
    private var status: Int?

    /// Starts the span of `head` as a child of `context`.
    init(tracer: any Tracer, head: HTTPRequest, context: InstrumentationContext) {
        let method = Self.knownMethods.contains(head.method.rawValue) ? head.method.rawValue : nil
        self.span = tracer.startSpan(method ?? "HTTP", context: context, ofKind: .client)
        let target = SpanTarget(head)
        self.span.updateAttributes { attributes in
            attributes["http.request.method"] = method ?? "_OTHER"
            if method == nil { attributes["http.request.method_original"] = head.method.rawValue }
            attributes["url.full"] = target.full
            if let address = target.address { attributes["server.address"] = address }
            if let port = target.port { attributes["server.port"] = port }
        }
    }

    /// The span's trace context, written into `fields` by `tracer` (W3C `traceparent` with an
    /// OpenTelemetry tracer).
    func inject(into fields: inout HTTPFields, with tracer: any Tracer) {
        tracer.inject(self.span.context, into: &fields, using: HTTPFieldsInjector())
    }

    mutating func received(_ head: HTTPResponse) {
        self.status = head.status.code
        self.span.attributes["http.response.status_code"] = head.status.code
    }

    func completed(_ attempt: RequestAttempt, with result: Result<TransferResponse, TransferError>, after duration: Duration?) {
        var attributes: SpanAttributes = [:]
        attributes["http.request.resend_count"] = attempt.number - 1
        switch result {
        case .success(let response):
            attributes["http.response.status_code"] = response.head.status.code
            if response.head.status.code >= 400 { attributes["error.type"] = String(response.head.status.code) }
        case .failure(let error):
            attributes["error.type"] = error.code.rawValue
        }
        if let duration { attributes["curlew.attempt.duration"] = Self.seconds(duration) }
        self.span.addEvent(SpanEvent(name: "curlew.attempt", attributes: attributes))
    }

    func retrying(after wait: Duration, because reason: RetryReason) {
        var attributes: SpanAttributes = [:]
        attributes["http.request.resend_count"] = reason.attempt
        attributes["curlew.retry.wait"] = Self.seconds(wait)
        attributes["curlew.retry.decided_by"] = reason.decidedBy == .interceptor ? "interceptor" : "retry_policy"
        self.span.addEvent(SpanEvent(name: "curlew.retry", attributes: attributes))
    }

    /// Sets the final attributes and ends the span; `attempts` is how many were made.
    func end(with result: Result<TransferResponse, any Error>, attempts: Int) {
        var errorType: String?
        self.span.updateAttributes { attributes in
            if attempts > 1 { attributes["http.request.resend_count"] = attempts - 1 }
            switch result {
            case .success(let response):
                Self.record(response, in: &attributes)
                if response.head.status.code >= 400 { errorType = String(response.head.status.code) }
            case .failure(let error):
                errorType = self.errorType(of: error)
            }
            if let errorType { attributes["error.type"] = errorType }
        }
        if case .failure(let error) = result { self.span.recordError(error) }
        if errorType != nil { self.span.setStatus(SpanStatus(code: .error)) }
        self.span.end()
    }

    /// `error.type`: the status of an error response (also when a serializer refused it, or the
    /// request failed after its head), else the error's code or type.
    private func errorType(of error: any Error) -> String {
        if let status = self.status, status >= 400 { return String(status) }
        if let transfer = error as? TransferError { return transfer.code.rawValue }
        if let serialization = error as? ResponseSerializationError {
            let status = serialization.response.status.code
            return status >= 400 ? String(status) : "ResponseSerializationError"
        }
        return String(describing: type(of: error))
    }

    /// The final response's protocol, peer and curl's timings of its attempt.
    private static func record(_ response: TransferResponse, in attributes: inout SpanAttributes) {
        let metrics = response.metrics
        attributes["http.response.status_code"] = response.head.status.code
        if let version = Self.protocolVersion(metrics.httpVersion) { attributes["network.protocol.version"] = version }
        if let address = metrics.remoteAddress { attributes["network.peer.address"] = address }
        if let port = metrics.remotePort { attributes["network.peer.port"] = port }
        attributes["curlew.timing.name_lookup"] = Self.seconds(metrics.nameLookup)
        attributes["curlew.timing.connect"] = Self.seconds(metrics.connect)
        attributes["curlew.timing.tls_handshake"] = Self.seconds(metrics.tlsHandshake)
        attributes["curlew.timing.first_byte"] = Self.seconds(metrics.firstByte)
        attributes["curlew.timing.total"] = Self.seconds(metrics.total)
        if metrics.redirectCount > 0 {
            attributes["curlew.redirect_count"] = metrics.redirectCount
            attributes["curlew.timing.redirects"] = Self.seconds(metrics.redirectTime)
        }
        if metrics.connectionSlotWait > .zero { attributes["curlew.timing.connection_slot_wait"] = Self.seconds(metrics.connectionSlotWait) }
        attributes["curlew.connection.reused"] = metrics.isConnectionReused
    }

    /// `network.protocol.version`: `1.1`, `2`…; `nil` when not known.
    static func protocolVersion(_ version: TransferMetrics.HTTPVersion) -> String? {
        switch version {
        case .http1_0: return "1.0"
        case .http1_1: return "1.1"
        case .http2: return "2"
        case .http3: return "3"
        case .unknown: return nil
        }
    }

    /// The methods OpenTelemetry names; others are `_OTHER`, and their spans `HTTP`.
    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY"]

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Writes a tracer's propagation fields (`traceparent`, `tracestate`, `baggage`…) into a request's
/// header fields, replacing fields of the same name.
struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into fields: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        fields[name] = value
    }
}
