/// A typed request target on a ``TestServer``, turned into a path (with query) by ``path``.
///
/// Every route answers `GET` (and `HEAD`, which sends the same head without the body); `.echo`,
/// `.upload`, `.multipart` and `.holdUpload` answer any method. A path the server does not know gets a 404, a known path with bad
/// parameters a 400. The same paths work as raw strings, for example with ``TestServer/url(path:tls:)``.
///
/// | Case | Path |
/// | --- | --- |
/// | `.bytes(n)` / `.bytes(n, chunked: true)` | `/bytes/n`, `/bytes/n?chunked=1` |
/// | `.status(code)` | `/status/code` |
/// | `.echo` / `.upload` | `/echo` (also `/echo/anything…`) / `/upload` |
/// | `.multipart` / `.multipart(checksums: false)` | `/multipart`, `/multipart?checksums=0` |
/// | `.json` / `.xml` / `.propertyList` | `/json` / `/xml` / `/plist` |
/// | `.delay(ms)` | `/delay/ms` |
/// | `.drip(bytes:chunks:intervalMilliseconds:)` | `/drip?bytes=b&chunks=c&interval=ms` |
/// | `.redirect(count:status:)` | `/redirect/n` (`?status=s` unless 302) |
/// | `.redirectTo(url:status:)` | `/redirect-to?url=…&status=s` |
/// | `.redirectLoop` | `/redirect-loop` (raw path takes `?status=s`) |
/// | `.entity(bytes:…)` | `/entity/n?ranges=0&etag=…&noetag=1&lastmodified=0&drip=c&interval=ms&holdfirst=1&version=v` (non-defaults only) |
/// | `.closeMidBody(bytes:)` | `/close-mid-body/n` |
/// | `.reset` | `/reset` |
/// | `.hugeHeaders(kilobytes:)` | `/huge-headers/kb` |
/// | `.chunked(bytes:chunkSize:)` | `/chunked/n?chunk=size` |
/// | `.stats` | `/stats` |
/// | `.flaky(key:failures:status:retryAfter:)` | `/flaky/key?failures=n&status=s&retry-after=v` |
/// | `.bearer(token:)` | `/bearer?token=t` |
/// | `.setCookie(name:value:)` | `/cookies/set?name=…&value=…` |
/// | `.responseHeader(name:value:)` | `/response-header?name=…&value=…` |
/// | `.basicAuth(user:password:)` | `/basic-auth/user/password` |
/// | `.digestAuth(user:password:)` | `/digest-auth/user/password` |
/// | `.cached(key:cacheControl:etag:lastModified:vary:)` | `/cached/key?cache-control=…&etag=0&lastmodified=1&vary=name` (non-defaults only) |
/// | `.firehose(key:bytes:)` | `/firehose/key?bytes=n` |
/// | `.events(key:count:dropAfter:retryMilliseconds:)` | `/events/key?count=n&drop=k&retry=ms` (non-defaults only) |
/// | `.holdUpload(key:)` | `/hold-upload/key` (any method) |
///
/// Numbers are plain decimal digits. Beyond these limits the answer is 400: delays, intervals and
/// event retries up to 3,600,000 ms, chunk and drip-piece sizes up to 16 MiB, entity versions
/// 1...1,000,000, huge headers up to 16,384 KiB, statuses 200...999 (redirects 300...399), event
/// counts up to 1,000,000 (`drop` at least 1). Keys are letters, digits, `-` and `_`.
public enum Route: Sendable, Hashable {
    /// `count` bytes of ``TestServer/expectedBody(count:offset:)`` with `Content-Length`; with
    /// `chunked`, without it, in pieces of 16 KiB (chunked transfer-encoding on HTTP/1.1, plain DATA
    /// frames on HTTP/2).
    case bytes(_ count: Int, chunked: Bool = false)
    /// That status with a short text body (`"<code> <reason>\n"`); no body for 204, 205 and 304.
    /// Codes from 200 to 999 are accepted.
    case status(_ code: Int)
    /// Any method: a JSON ``EchoReply`` describing the request, the body counted and hashed as it
    /// streams (never buffered).
    case echo
    /// The same as ``echo`` under `/upload`.
    case upload
    /// Any method with a `multipart/form-data` body: a JSON ``MultipartEchoReply`` listing each part's
    /// name, file name, content type, size and checksum. The body is parsed as it streams and never
    /// buffered. Without `checksums` the parts are only measured (a 1 GiB upload is then cheap to
    /// receive even in a debug build). A request that is not multipart with a boundary gets a 400.
    case multipart(checksums: Bool = true)
    /// ``TestServer/jsonDocument`` with `Content-Type: application/json`.
    case json
    /// ``TestServer/xmlDocument`` with `Content-Type: application/xml`.
    case xml
    /// ``TestServer/propertyListDocument`` with `Content-Type: application/x-plist`.
    case propertyList
    /// Waits that long (an event-loop timer, not a blocking sleep), then answers 200 `"delayed\n"`.
    case delay(_ milliseconds: Int)
    /// Headers with `Content-Length: bytes` at once, then the body in `chunks` pieces: the first at
    /// once, each further one `intervalMilliseconds` after the previous (so the body takes
    /// `(chunks - 1) × interval`). `chunks` is clamped to `1...bytes`.
    case drip(bytes: Int, chunks: Int, intervalMilliseconds: Int)
    /// `count` redirects, `/redirect/n` → `/redirect/n-1` → … → `/redirect/0`, which answers 200
    /// `"redirected"`. `Location` is an absolute path, so it follows the scheme and port in use.
    /// Any 3xx status works; 301, 302, 303, 307 and 308 are the interesting ones.
    case redirect(count: Int, status: Int = 302)
    /// One redirect whose `Location` is `url` verbatim (`file:///etc/passwd`, another host, a relative path…).
    case redirectTo(url: String, status: Int = 302)
    /// A 302 to itself, forever.
    case redirectLoop
    /// A deterministic resource of `bytes` bytes with validators and single-range support.
    ///
    /// With `ranges`: `Accept-Ranges: bytes`; `Range: bytes=a-`, `bytes=a-b` and `bytes=-n` give 206
    /// with `Content-Range`, a start past the end gives 416 (`Content-Range: bytes */size`), anything
    /// else (several ranges, garbage) is ignored (full 200). `If-Range` is honoured: a strong ETag equal
    /// to the current one, or a date equal to `Last-Modified`, lets the range through; anything else
    /// (weak tags included) gives the full 200. Without `ranges`, `Range` is ignored and there is no
    /// `Accept-Ranges`.
    ///
    /// `etag` is the `ETag` of version 1 (`nil`: no `ETag`); `lastModified` sends `Last-Modified`.
    /// `version` simulates the resource changing: the content is shifted by `version - 1`, the ETag and
    /// the date change (see ``entityETag`` and ``entityLastModified``). With `dripChunkSize` the body is
    /// written in pieces of that size, `dripIntervalMilliseconds` apart, so a client can pause mid-body.
    /// With `holdFirst` as well, the first tagged request of its tag (see ``TestServer/tagHeaderName``)
    /// stops after its first piece until the client goes away (at most ``entityHold``): a test that
    /// pauses there does not depend on how fast the client gets to it; later requests with the tag
    /// (a resume) drip as usual.
    case entity(
        bytes: Int,
        ranges: Bool = true,
        etag: String? = "\"v1\"",
        lastModified: Bool = true,
        dripChunkSize: Int? = nil,
        dripIntervalMilliseconds: Int = 0,
        holdFirst: Bool = false,
        version: Int = 1
    )
    /// `Content-Length: bytes`, half of the body, then the connection is closed (on HTTP/2, the stream
    /// is reset instead, so other streams on the connection survive, once the client has acknowledged
    /// a PING sent after the half: curl before 8.0 drops what it holds of a reset stream).
    case closeMidBody(bytes: Int)
    /// No response: the connection is reset (`SO_LINGER` 0, then close, so the client gets a TCP RST;
    /// over TLS the close bypasses the TLS layer, so no `close_notify`). On HTTP/2 the stream is reset
    /// (`RST_STREAM`).
    case reset
    /// A 200 whose header block is about `kilobytes` KiB: `kilobytes × 1024 / 100` lines `X-Huge: aaa…`
    /// of 100 bytes each (26 values cycling). Over HTTP/2 the HPACK-encoded block must fit one frame, which
    /// holds about 1.5 MiB of such headers; at most 16384 KiB is accepted.
    case hugeHeaders(kilobytes: Int)
    /// `bytes` bytes without `Content-Length`, written in pieces of `chunkSize` (one HTTP/1.1 chunk, or
    /// one HTTP/2 DATA write, per piece).
    case chunked(bytes: Int, chunkSize: Int = 16_384)
    /// The server's ``Stats`` as JSON (`Stats` is `Codable`), for processes that cannot call
    /// ``TestServer/stats``, such as the benchmark runner using the executable. The request itself is
    /// already counted in what it returns.
    case stats
    /// Fails the first `failures` requests for `key` — with `status` (and `Retry-After: retryAfter`
    /// when given), or, for status 0, by resetting the connection before any byte — then answers
    /// like ``echo`` (so a retried body can be checked). The server counts the requests per key (``TestServer/requests(forKey:)``);
    /// use a fresh key per test. `key` is letters, digits, `-` and `_`.
    case flaky(key: String, failures: Int, status: Int = 503, retryAfter: String? = nil)
    /// 200 `"authorized\n"` when the request has `Authorization: Bearer <token>`, otherwise 401 with
    /// `WWW-Authenticate: Bearer`.
    case bearer(token: String)
    /// What ``echo`` answers, with `Set-Cookie: name=value; Path=/` (a host-only session cookie).
    /// The name must be an HTTP token and the value printable ASCII without `;`, `,`, `"`, a backslash or
    /// spaces; anything else is a 400.
    case setCookie(name: String, value: String)
    /// What ``echo`` answers, with one more response header field: `name: value` (for example
    /// `Strict-Transport-Security` or `Alt-Svc`). The name must be an HTTP token and the value
    /// printable ASCII or spaces; anything else is a 400.
    case responseHeader(name: String, value: String)
    /// With `Authorization: Basic` for exactly `user:password`, 200 and
    /// `{"authenticated":true,"user":"…"}`; otherwise 401 with `WWW-Authenticate: Basic realm="curlew"`.
    case basicAuth(user: String, password: String)
    /// The same with HTTP Digest (RFC 7616, MD5, `qop=auth`): a 401 challenge with a fixed nonce
    /// unless the `Authorization: Digest` answer's response hash is right for `user` and `password`.
    case digestAuth(user: String, password: String)
    /// A small representation with caching headers, for HTTP caches: `Cache-Control: cacheControl`
    /// when given, `ETag: "<key>"` with `etag`, a fixed `Last-Modified` with `lastModified`, and
    /// `Vary: vary` when given. Any method is answered, and counted per `key` like ``flaky(key:failures:status:retryAfter:)``
    /// (``TestServer/requests(forKey:)``); every answer carries `X-Request-Number: <n>`, the count.
    ///
    /// A GET or HEAD whose `If-None-Match` lists the ETag (or `*`) — or, without `If-None-Match`,
    /// whose `If-Modified-Since` is the `Last-Modified` — gets 304 with those headers and no body.
    /// Anything else gets 200 `text/plain` with the body `cached <key> #<n>\n` (with `vary`:
    /// `cached <key> #<n> <the request's value of the header vary names>\n`), so a body tells which
    /// request made it. `key` is letters, digits, `-` and `_`; `vary` one header name.
    case cached(key: String, cacheControl: String? = nil, etag: Bool = true, lastModified: Bool = false, vary: String? = nil)
    /// `bytes` bytes of ``TestServer/expectedBody(count:offset:)`` with `Content-Length`, written as fast
    /// as the connection takes them. The server records per key (``TestServer/firehose(_:)``) the bytes
    /// handed to the kernel and how often the connection stopped taking them, so a test sees from the
    /// server's side that a client that stops reading stops the sender. Use a fresh key per test.
    case firehose(key: String, bytes: Int)
    /// Server-Sent Events (`text/event-stream`, `Cache-Control: no-store`; see ``EventStream`` for the
    /// exact bytes): a comment line, `retry: ms` when given, then events `id` 1 to `count`, each with
    /// two data lines. A request with `Last-Event-ID: n` continues after event `n`; one with nothing
    /// left to send (`n ≥ count`, or the last event already went out on an earlier connection of
    /// the key) gets 204 No Content, which tells an event source to stop reconnecting.
    ///
    /// With `dropAfter`, each connection sends at most that many events and is then cut (HTTP/1.1:
    /// closed without the last chunk; HTTP/2: the stream is reset, as for ``closeMidBody(bytes:)``),
    /// unless it sent the last event, after which the response ends normally. The server counts requests per key
    /// (``TestServer/requests(forKey:)``) and records each one's `Last-Event-ID`
    /// (``TestServer/lastEventIDs(forKey:)``).
    case events(key: String, count: Int, dropAfter: Int? = nil, retryMilliseconds: Int? = nil)
    /// Any method with a body: the server reads nothing of the body until
    /// ``TestServer/releaseUpload(_:)`` for the key (before or after the request arrives), then
    /// answers like ``echo``. A client's upload meanwhile stalls once the socket buffers (HTTP/1.1)
    /// or the stream's flow-control window (HTTP/2) are full. The server counts the requests
    /// (``TestServer/requests(forKey:)``).
    case holdUpload(key: String)

    /// The path and query this route is served at, for example `/bytes/13`.
    public var path: String {
        switch self {
        case .bytes(let count, let chunked):
            return "/bytes/\(count)" + (chunked ? "?chunked=1" : "")
        case .status(let code):
            return "/status/\(code)"
        case .echo:
            return "/echo"
        case .upload:
            return "/upload"
        case .multipart(let checksums):
            return "/multipart" + (checksums ? "" : "?checksums=0")
        case .json:
            return "/json"
        case .xml:
            return "/xml"
        case .propertyList:
            return "/plist"
        case .delay(let milliseconds):
            return "/delay/\(milliseconds)"
        case .drip(let bytes, let chunks, let interval):
            return "/drip?bytes=\(bytes)&chunks=\(chunks)&interval=\(interval)"
        case .redirect(let count, let status):
            return "/redirect/\(count)" + (status == 302 ? "" : "?status=\(status)")
        case .redirectTo(let url, let status):
            return "/redirect-to?url=\(PercentEncoding.encode(url))&status=\(status)"
        case .redirectLoop:
            return "/redirect-loop"
        case .entity(let bytes, let ranges, let etag, let lastModified, let dripChunkSize, let interval, let holdFirst, let version):
            var query: [String] = []
            if !ranges { query.append("ranges=0") }
            if let etag {
                if etag != "\"v1\"" { query.append("etag=\(PercentEncoding.encode(etag))") }
            } else {
                query.append("noetag=1")
            }
            if !lastModified { query.append("lastmodified=0") }
            if let dripChunkSize { query.append("drip=\(dripChunkSize)") }
            if interval != 0 { query.append("interval=\(interval)") }
            if holdFirst { query.append("holdfirst=1") }
            if version != 1 { query.append("version=\(version)") }
            return "/entity/\(bytes)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        case .closeMidBody(let bytes):
            return "/close-mid-body/\(bytes)"
        case .reset:
            return "/reset"
        case .hugeHeaders(let kilobytes):
            return "/huge-headers/\(kilobytes)"
        case .chunked(let bytes, let chunkSize):
            return "/chunked/\(bytes)?chunk=\(chunkSize)"
        case .stats:
            return "/stats"
        case .flaky(let key, let failures, let status, let retryAfter):
            return "/flaky/\(key)?failures=\(failures)&status=\(status)"
                + (retryAfter.map { "&retry-after=\(PercentEncoding.encode($0))" } ?? "")
        case .bearer(let token):
            return "/bearer?token=\(PercentEncoding.encode(token))"
        case .setCookie(let name, let value):
            return "/cookies/set?name=\(PercentEncoding.encode(name))&value=\(PercentEncoding.encode(value))"
        case .responseHeader(let name, let value):
            return "/response-header?name=\(PercentEncoding.encode(name))&value=\(PercentEncoding.encode(value))"
        case .basicAuth(let user, let password):
            return "/basic-auth/\(PercentEncoding.encode(user))/\(PercentEncoding.encode(password))"
        case .digestAuth(let user, let password):
            return "/digest-auth/\(PercentEncoding.encode(user))/\(PercentEncoding.encode(password))"
        case .cached(let key, let cacheControl, let etag, let lastModified, let vary):
            var query: [String] = []
            if let cacheControl { query.append("cache-control=\(PercentEncoding.encode(cacheControl))") }
            if !etag { query.append("etag=0") }
            if lastModified { query.append("lastmodified=1") }
            if let vary { query.append("vary=\(PercentEncoding.encode(vary))") }
            return "/cached/\(key)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        case .firehose(let key, let bytes):
            return "/firehose/\(key)?bytes=\(bytes)"
        case .events(let key, let count, let dropAfter, let retryMilliseconds):
            return "/events/\(key)?count=\(count)" + (dropAfter.map { "&drop=\($0)" } ?? "")
                + (retryMilliseconds.map { "&retry=\($0)" } ?? "")
        case .holdUpload(let key):
            return "/hold-upload/\(key)"
        }
    }

    /// The longest an `.entity` with `holdFirst` holds its first request after the first piece: far
    /// beyond any test's wait for a client to pause, short enough that a client that never pauses
    /// still gets its body.
    public static let entityHold: Duration = .seconds(60)

    /// For `.entity`, the `ETag` the server sends for it (`nil` for other routes or without ETag).
    public var entityETag: String? {
        guard case .entity(_, _, let etag, _, _, _, _, let version) = self else { return nil }
        return EntityValidators.etag(base: etag, version: version)
    }

    /// For `.entity` with `lastModified`, the `Last-Modified` the server sends for it; otherwise `nil`.
    public var entityLastModified: String? {
        guard case .entity(_, _, _, let lastModified, _, _, _, let version) = self, lastModified else { return nil }
        return EntityValidators.lastModified(version: version)
    }

    /// For `.entity`, the whole content the server sends for it (shifted by `version - 1`); for `.bytes`,
    /// `.chunked`, `.drip`, `.closeMidBody` and `.firehose`, their full body; otherwise `nil`.
    public var expectedBody: [UInt8]? {
        switch self {
        case .entity(let bytes, _, _, _, _, _, _, let version):
            return TestServer.expectedBody(count: bytes, offset: version - 1)
        case .bytes(let count, _), .chunked(let count, _), .drip(let count, _, _), .closeMidBody(let count),
             .firehose(_, let count):
            return TestServer.expectedBody(count: count)
        default:
            return nil
        }
    }
}
