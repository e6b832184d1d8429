/// The three kinds of HTTP listener a ``TestServer`` runs.
public enum ListenerKind: String, Sendable, Hashable, CaseIterable {
    /// Cleartext HTTP/1.1 (``TestServer/port``).
    case plain
    /// TLS with ALPN `h2` and `http/1.1` (``TestServer/tlsPort``).
    case tls
    /// Cleartext HTTP/2 with prior knowledge (``TestServer/h2cPort``).
    case h2c
}

/// A snapshot of a ``TestServer``'s counters, taken with ``TestServer/stats``.
///
/// Counters move forward from the moment the server starts (or from the last
/// ``TestServer/resetStats()``). A request is counted before its first response byte is written, and a
/// connection before its first request is read, so a client that has seen a response sees it counted.
/// Closing is different: the server notices a closed connection a moment after the client closed it, so
/// wait for ``openConnections`` with ``TestServer/waitForStats(timeout:until:)``.
public struct Stats: Sendable, Hashable, Codable {
    /// Connections accepted on the plain HTTP/1.1 listener.
    public var plainConnectionsAccepted = 0
    /// Connections accepted on the TLS listener (whatever ALPN then chose).
    public var tlsConnectionsAccepted = 0
    /// Connections accepted on the h2c listener.
    public var h2cConnectionsAccepted = 0
    /// TLS connections on which ALPN selected `h2`.
    public var tlsHTTP2Connections = 0
    /// Connections currently open, all listeners together.
    public var openConnections = 0
    /// The largest value ``openConnections`` has reached.
    public var maxOpenConnections = 0
    /// Requests whose complete head and body were received and answered (or deliberately not answered,
    /// as with `.reset`), all protocols together.
    public var requestsServed = 0
    /// Of ``requestsServed``, those that came over HTTP/1.x.
    public var http1Requests = 0
    /// Of ``requestsServed``, those that came over HTTP/2 (TLS or h2c).
    public var http2Requests = 0
    /// The largest number of streams seen open at once on a single HTTP/2 connection.
    public var maxConcurrentStreams = 0

    /// Creates an all-zero snapshot.
    public init() {}

    /// Connections accepted on all listeners.
    public var connectionsAccepted: Int {
        self.plainConnectionsAccepted + self.tlsConnectionsAccepted + self.h2cConnectionsAccepted
    }

    /// Connections accepted on one listener.
    public func connectionsAccepted(on kind: ListenerKind) -> Int {
        switch kind {
        case .plain: self.plainConnectionsAccepted
        case .tls: self.tlsConnectionsAccepted
        case .h2c: self.h2cConnectionsAccepted
        }
    }
}
