import Foundation
import HTTPTypes

/// The result of a successful transfer: the final response head, the body, and how it went.
///
/// "Successful" means an HTTP response arrived complete, whatever its status: a 404 is a successful
/// transfer. Status validation belongs to response serializers.
public struct TransferResponse: Sendable {
    /// Status and header fields of the final response (after redirects).
    public var head: HTTPResponse
    /// The body, when the destination was ``ResponseDestination/memory``; for a file destination
    /// the response did not replace (its status is not in
    /// ``TransferOptions/fileReplacementStatusCodes``), the body's first bytes (up to
    /// ``ResponseDestination/retainedErrorBodySize``).
    public var body: Data?
    /// The file holding the body, when the destination was ``ResponseDestination/file(_:)`` and the
    /// response replaced it; `nil` otherwise (the destination was left as it was).
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
    /// … until the request was about to be sent: name lookup, connect, proxy and TLS handshakes done.
    public var preTransfer: Duration = .zero
    /// … until the transfer finished.
    public var total: Duration = .zero
    /// Time spent in the redirects before the final attempt: the sum of their attempts' total times
    /// (the timings above are the final attempt's). Zero without redirects.
    public var redirectTime: Duration = .zero
    /// How long the transfer waited in the engine for a connection slot to its host (behind
    /// ``TransferEngine/Configuration/maximumConnectionsPerHost``), over all its attempts; not part
    /// of the timings above, which start when curl gets the attempt.
    public var connectionSlotWait: Duration = .zero

    /// Bytes of the final attempt's request head (request line and header fields) as sent.
    public var requestHeaderBytes: Int64 = 0
    /// Bytes of the final attempt's request body as sent.
    public var requestBodyBytes: Int64 = 0
    /// Bytes of the final attempt's response heads as received, interim and challenge responses
    /// included.
    public var responseHeaderBytes: Int64 = 0
    /// Bytes of the final response's body as received, before decompression (after it, the body's
    /// own length).
    public var responseBodyBytes: Int64 = 0

    /// Whether the final attempt ran on a connection an earlier transfer had opened.
    public var isConnectionReused: Bool { self.connectionsOpened == 0 }
    /// curl's number for the final attempt's connection, the same for every transfer that used it;
    /// `nil` with libcurl before 8.2, which does not report it (``LibCurl/reportsConnectionIDs``).
    public var connectionID: Int64?

    /// The IP address the final attempt was connected to (the proxy's, through a proxy); `nil` over
    /// a Unix socket.
    public var remoteAddress: String?
    /// The port the final attempt was connected to; `nil` over a Unix socket.
    public var remotePort: Int?
    /// The local IP address of the final attempt's connection; `nil` over a Unix socket.
    public var localAddress: String?
    /// The local port of the final attempt's connection; `nil` over a Unix socket.
    public var localPort: Int?

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
