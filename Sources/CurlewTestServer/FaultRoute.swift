/// A reply no HTTP library would send, served by the fault listener (``TestServer/faultURL(_:)``).
///
/// The fault listener speaks raw TCP: it reads the request head (up to the blank line), looks at the
/// path, and answers with exactly the bytes of the fault, bypassing every HTTP encoder. A path it does
/// not know gets a plain `404`.
///
/// | Case | Path | What the client sees |
/// | --- | --- | --- |
/// | `.emptyReply` | `/empty-reply` | the connection closed without a byte (curl 52) |
/// | `.badStatusLine` | `/bad-status-line` | `HTTP/1.1 abc` as the status line |
public enum FaultRoute: String, Sendable, Hashable, CaseIterable {
    /// Reads the request, then closes the connection without sending anything.
    case emptyReply = "empty-reply"
    /// Answers `HTTP/1.1 abc\r\n\r\n`: a status line whose code is not a number.
    case badStatusLine = "bad-status-line"

    /// The request path that selects this fault.
    public var path: String { "/" + self.rawValue }

    /// The bytes sent back before the connection is closed (empty: close at once).
    var reply: [UInt8] {
        switch self {
        case .emptyReply: return []
        case .badStatusLine: return Array("HTTP/1.1 abc\r\nContent-Length: 0\r\n\r\n".utf8)
        }
    }

    /// The fault for a request path (query ignored), if any.
    init?(path: Substring) {
        let bare = path.split(separator: "?", maxSplits: 1).first ?? path
        guard bare.first == "/", let route = FaultRoute(rawValue: String(bare.dropFirst())) else { return nil }
        self = route
    }
}
