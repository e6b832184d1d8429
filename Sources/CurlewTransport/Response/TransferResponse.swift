import Foundation
import HTTPTypes

/// The result of a successful transfer: the final response head, the body, and how it went.
///
/// "Successful" means an HTTP response arrived complete, whatever its status: a 404 is a successful
/// transfer. Status validation belongs to response serializers.
public struct TransferResponse: Sendable {
    /// Status and header fields of the final response (after redirects).
    public var head: HTTPResponse
    /// The body, when the destination was ``ResponseDestination/memory``.
    public var body: Data?
    /// The file holding the body, when the destination was ``ResponseDestination/file(_:)``.
    public var fileURL: URL?
    /// The URL the final response came from.
    public var url: URL
    /// Protocol, redirects, connections and timings.
    public var metrics: TransferMetrics

    /// Creates a response; Curlew makes these, tests may too.
    public init(head: HTTPResponse, body: Data?, fileURL: URL?, url: URL, metrics: TransferMetrics) {
        self.head = head
        self.body = body
        self.fileURL = fileURL
        self.url = url
        self.metrics = metrics
    }
}

/// How a transfer went, read from curl when it finished.
public struct TransferMetrics: Sendable, Hashable {
    /// The HTTP version of the final response.
    public var httpVersion: HTTPVersion = .unknown
    /// How many redirects were followed.
    public var redirectCount: Int = 0
    /// How many times a paused transfer resumed.
    public var resumeCount: Int = 0
    /// How many times the request was sent again after a failed attempt (``RetryPolicy``): the
    /// attempts made are `retryCount + 1`. Set by ``TransferEngine/execute(_:retry:)`` and by
    /// `RequestOperation`; a single ``Transfer`` never retries, and reports 0.
    public var retryCount: Int = 0
    /// Whether an HTTP cache answered (`CachingTransport`, module `Curlew`): `nil` when no cache
    /// looked at the request.
    public var cacheOutcome: CacheOutcome?
    /// New connections the final attempt opened (0 when it reused a pooled connection).
    public var connectionsOpened: Int = 0
    /// Time from the final attempt's start until the name was resolved.
    public var nameLookup: Duration = .zero
    /// … until the TCP connection was up.
    public var connect: Duration = .zero
    /// … until the TLS handshake was done (zero without TLS).
    public var tlsHandshake: Duration = .zero
    /// … until the first response byte arrived.
    public var firstByte: Duration = .zero
    /// … until the transfer finished.
    public var total: Duration = .zero

    /// Creates empty metrics.
    public init() {}
}

extension TransferMetrics {
    /// The HTTP version a response came in. (Nested, so that it does not collide with SwiftNIO's
    /// `HTTPVersion` in code that imports both.)
    public enum HTTPVersion: String, Sendable, Hashable {
        /// HTTP/1.0.
        case http1_0 = "HTTP/1.0"
        /// HTTP/1.1.
        case http1_1 = "HTTP/1.1"
        /// HTTP/2, over TLS (ALPN) or with prior knowledge.
        case http2 = "HTTP/2"
        /// HTTP/3, when libcurl reports it (Curlew never asks for it).
        case http3 = "HTTP/3"
        /// Not known: no response head was received, or libcurl reported a version Curlew does not name.
        case unknown = "unknown"
    }
}

/// Bytes moved so far, in both directions.
///
/// Both counts only grow. `expected…` values are `nil` when unknown (no `Content-Length`, or a
/// compressed body that curl decodes).
public struct TransferProgress: Sendable, Hashable {
    /// Request body bytes handed to the connection.
    public var bytesSent: Int64 = 0
    /// The request body's length, when there is a body.
    public var expectedBytesToSend: Int64?
    /// Response body bytes delivered to the destination.
    public var bytesReceived: Int64 = 0
    /// The response body's length, when the server said.
    public var expectedBytesToReceive: Int64?

    /// Creates a progress value.
    public init(bytesSent: Int64 = 0, expectedBytesToSend: Int64? = nil,
                bytesReceived: Int64 = 0, expectedBytesToReceive: Int64? = nil) {
        self.bytesSent = bytesSent
        self.expectedBytesToSend = expectedBytesToSend
        self.bytesReceived = bytesReceived
        self.expectedBytesToReceive = expectedBytesToReceive
    }
}
