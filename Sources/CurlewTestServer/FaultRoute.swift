/// A reply no HTTP library would send, served by the fault listener (``TestServer/faultURL(_:)``).
///
/// The fault listener speaks raw TCP: it reads the request head (up to the blank line), looks at the
/// path, and answers with exactly the bytes of the fault, bypassing every HTTP encoder. A path it does
/// not know gets a plain `404`. ``acceptThenClose`` is served on a listener of its own, which closes
/// every connection as soon as it is accepted, before the request is read.
///
/// | Case | Path | What the client sees |
/// | --- | --- | --- |
/// | `.acceptThenClose` | any, on its own port | the connection closed at once, nothing read, nothing sent |
/// | `.emptyReply` | `/empty-reply` | the connection closed without a byte (curl 52) |
/// | `.reset` | `/reset` | the connection reset (TCP RST) after the request, no byte sent |
/// | `.shortBody` | `/short-body` | `Content-Length: 1000`, 500 bytes, then the connection closed |
/// | `.badStatusLine` | `/bad-status-line` | `HTTP/1.1 abc` as the status line |
/// | `.oversizedHeaderLine` | `/oversized-header-line` | one header line of 1 MiB |
/// | `.manyHeaders` | `/many-headers` | 10,000 header lines (about 240 KB) |
/// | `.invalidChunked` | `/invalid-chunked` | `Transfer-Encoding: chunked` with a chunk size of `zz` |
/// | `.dripHead` | `/drip-head` | the head one byte every 100 ms, for ten minutes |
/// | `.stallHead` | `/stall-head` | half the status line, then silence (the connection stays open) |
/// | `.dripBody` | `/drip-body` | the head at once, then one body byte every 100 ms, for ten minutes |
/// | `.stallBody` | `/stall-body` | the head and 10 of 1,000 body bytes, then silence |
/// | `.gzipBomb` | `/gzip-bomb` | 1,040,480 bytes of gzip that inflate to about 1 GiB of zeros |
/// | `.doubleGzipBomb` | `/double-gzip-bomb` | `Content-Encoding: gzip, gzip`: 6.6 KB that inflate to the bomb, then to 1 GiB |
/// | `.conflictingLengths` | `/conflicting-lengths` | `Content-Length: 5` and `Content-Length: 8`, 8 body bytes |
/// | `.conflictingLengthList` | `/conflicting-length-list` | `Content-Length: 5, 8`, 8 body bytes |
/// | `.overflowingLength` | `/overflowing-length` | `Content-Length: 100000000000000000000000` (10^23), 8 body bytes |
/// | `.negativeLength` | `/negative-length` | `Content-Length: -1`, 8 body bytes |
/// | `.junkLength` | `/junk-length` | `Content-Length: 12abc`, 12 body bytes |
/// | `.emptyLength` | `/empty-length` | `Content-Length:` with no value, 8 body bytes |
/// | `.chunkedWithLength` | `/chunked-with-length` | `Transfer-Encoding: chunked` and `Content-Length: 3`, one chunk of 8 bytes |
/// | `.repeatedLengths` | `/repeated-lengths` | `Content-Length: 8` twice, 8 body bytes (valid: RFC 9112 §6.3) |
/// | `.repeatedLengthList` | `/repeated-length-list` | `Content-Length: 8, 8`, 8 body bytes (valid) |
///
/// Every framing route but the two valid ones sends a head whose body length RFC 9112 §6.3 calls
/// invalid; their body bytes are `abcdefgh` (and `ijkl` for the junk length), and the connection is
/// closed after them.
///
/// The bombs are valid gzip (CRC and length check out) and are built in memory when first asked for
/// (``GzipBomb``), not stored.
public enum FaultRoute: String, Sendable, Hashable, CaseIterable {
    /// Closes the connection as soon as it is accepted (its own listener; the path is ignored).
    case acceptThenClose = "accept-then-close"
    /// Reads the request, then closes the connection without sending anything.
    case emptyReply = "empty-reply"
    /// Reads the request, then resets the connection (`SO_LINGER` 0 and close: a TCP RST).
    case reset = "reset"
    /// Announces 1,000 body bytes, sends 500, and closes.
    case shortBody = "short-body"
    /// Answers `HTTP/1.1 abc\r\n\r\n`: a status line whose code is not a number.
    case badStatusLine = "bad-status-line"
    /// A 200 with one header line of 1 MiB (`X-Oversized: aaa…`).
    case oversizedHeaderLine = "oversized-header-line"
    /// A 200 with 10,000 header lines of 24 bytes each.
    case manyHeaders = "many-headers"
    /// A chunked 200 whose first chunk size is `zz`.
    case invalidChunked = "invalid-chunked"
    /// A 200 head sent one byte every 100 ms (for ten minutes at most, then the connection closes).
    case dripHead = "drip-head"
    /// Half a status line, then nothing (the connection stays open until the client gives up).
    case stallHead = "stall-head"
    /// A 200 head with `Content-Length: 1000000` at once, then one body byte every 100 ms (ten minutes at most).
    case dripBody = "drip-body"
    /// A 200 head with `Content-Length: 1000` and 10 body bytes, then nothing.
    case stallBody = "stall-body"
    /// `Content-Encoding: gzip`: ``GzipBomb/single``, about 1 MB inflating to about 1 GiB.
    case gzipBomb = "gzip-bomb"
    /// `Content-Encoding: gzip, gzip`: ``GzipBomb/double``, a few KB inflating to the single bomb.
    case doubleGzipBomb = "double-gzip-bomb"
    /// Two `Content-Length` fields that disagree (5 and 8), then 8 body bytes.
    case conflictingLengths = "conflicting-lengths"
    /// One `Content-Length` listing two different values (`5, 8`), then 8 body bytes.
    case conflictingLengthList = "conflicting-length-list"
    /// A `Content-Length` of 10^23, beyond 64 bits, then 8 body bytes.
    case overflowingLength = "overflowing-length"
    /// `Content-Length: -1`, then 8 body bytes.
    case negativeLength = "negative-length"
    /// `Content-Length: 12abc`, then 12 body bytes.
    case junkLength = "junk-length"
    /// A `Content-Length` with no value, then 8 body bytes.
    case emptyLength = "empty-length"
    /// `Transfer-Encoding: chunked` beside `Content-Length: 3`, then one 8-byte chunk.
    case chunkedWithLength = "chunked-with-length"
    /// Two `Content-Length: 8` fields, then 8 body bytes: valid.
    case repeatedLengths = "repeated-lengths"
    /// `Content-Length: 8, 8`, then 8 body bytes: valid.
    case repeatedLengthList = "repeated-length-list"

    /// The request path that selects this fault.
    public var path: String { "/" + self.rawValue }

    /// The interval between two dripped bytes.
    static let dripIntervalMilliseconds: Int64 = 100
    /// How many bytes a drip sends at most (ten minutes' worth), then the connection is closed.
    static let dripLimit = 6_000

    /// The fault for a request path (query ignored), if any.
    init?(path: Substring) {
        let bare = path.split(separator: "?", maxSplits: 1).first ?? path
        guard bare.first == "/", let route = FaultRoute(rawValue: String(bare.dropFirst())) else { return nil }
        self = route
    }
}
