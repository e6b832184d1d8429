/// What the server does for one request target: a ``Route`` it knows, or why it refuses.
enum ResolvedRoute: Hashable {
    /// Longest accepted delay or drip interval (one hour): `TimeAmount` would overflow on absurd values.
    static let maximumMilliseconds = 3_600_000
    /// Largest accepted chunk or drip piece size (16 MiB): one such piece may be one allocation.
    static let maximumPieceSize = 16 << 20
    /// Largest accepted entity version (the date moves one day per version).
    static let maximumVersion = 1_000_000
    /// Largest accepted `.events` count.
    static let maximumEventCount = 1_000_000

    case route(Route)
    /// `/redirect-loop`, with the status taken from its query.
    case redirectLoop(status: Int)
    /// `/`: a tiny 200, handy as a health check.
    case root
    case notFound
    case badRequest(String)

    /// Maps a request target to what to serve. Never traps: bad numbers and unknown names become
    /// ``badRequest(_:)`` and ``notFound``.
    static func resolve(_ target: ServerRequestTarget) -> ResolvedRoute {
        let segments = target.segments
        guard let first = segments.first else { return .root }
        let argument = segments.count > 1 ? segments[1] : nil

        // The hot path of the benchmark runner (`/bytes/13`) goes first and allocates nothing.
        if first == "bytes" {
            guard segments.count == 2, let count = argument.flatMap(RangeDecision.parseDigits) else {
                return .badRequest("usage: /bytes/<count>[?chunked=1]")
            }
            let chunked = target.query.isEmpty ? false : flag(target.queryValue("chunked"))
            return .route(.bytes(count, chunked: chunked))
        }

        switch first {
        case "echo":
            return .route(.echo)
        case "upload" where segments.count == 1:
            return .route(.upload)
        case "multipart" where segments.count == 1:
            let checksums = target.queryValue("checksums").map { $0 != "0" } ?? true
            return .route(.multipart(checksums: checksums))
        case "json" where segments.count == 1:
            return .route(.json)
        case "xml" where segments.count == 1:
            return .route(.xml)
        case "plist" where segments.count == 1:
            return .route(.propertyList)
        case "status":
            guard segments.count == 2, let code = argument.flatMap(RangeDecision.parseDigits), (200...999).contains(code)
            else { return .badRequest("usage: /status/<200...999>") }
            return .route(.status(code))
        case "delay":
            guard segments.count == 2, let milliseconds = argument.flatMap(RangeDecision.parseDigits),
                milliseconds <= maximumMilliseconds
            else { return .badRequest("usage: /delay/<milliseconds, at most 3600000>") }
            return .route(.delay(milliseconds))
        case "drip" where segments.count == 1:
            guard let bytes = number(target, "bytes"), let chunks = number(target, "chunks", default: 1),
                let interval = number(target, "interval", default: 0), interval <= maximumMilliseconds
            else { return .badRequest("usage: /drip?bytes=<n>&chunks=<n>&interval=<ms, at most 3600000>") }
            return .route(.drip(bytes: bytes, chunks: chunks, intervalMilliseconds: interval))
        case "redirect":
            guard segments.count == 2, let count = argument.flatMap(RangeDecision.parseDigits),
                let status = redirectStatus(target)
            else { return .badRequest("usage: /redirect/<count>[?status=3xx]") }
            return .route(.redirect(count: count, status: status))
        case "redirect-to" where segments.count == 1:
            guard let url = target.queryValue("url"), let status = redirectStatus(target) else {
                return .badRequest("usage: /redirect-to?url=<percent-encoded>[&status=3xx]")
            }
            return .route(.redirectTo(url: url, status: status))
        case "redirect-loop" where segments.count == 1:
            guard let status = redirectStatus(target) else { return .badRequest("usage: /redirect-loop[?status=3xx]") }
            return .redirectLoop(status: status)
        case "entity":
            return entity(target, argument: segments.count == 2 ? argument : nil)
        case "close-mid-body":
            guard segments.count == 2, let bytes = argument.flatMap(RangeDecision.parseDigits) else {
                return .badRequest("usage: /close-mid-body/<bytes>")
            }
            return .route(.closeMidBody(bytes: bytes))
        case "stats" where segments.count == 1:
            return .route(.stats)
        case "flaky":
            guard segments.count == 2, let key = argument, isKey(key),
                let failures = number(target, "failures", default: 1),
                let status = number(target, "status", default: 503), status == 0 || (200...999).contains(status)
            else { return .badRequest("usage: /flaky/<key>?failures=<n>&status=<0 or 200...999>[&retry-after=<value>]") }
            return .route(.flaky(key: String(key), failures: failures, status: status, retryAfter: target.queryValue("retry-after")))
        case "bearer" where segments.count == 1:
            guard let token = target.queryValue("token") else { return .badRequest("usage: /bearer?token=<token>") }
            return .route(.bearer(token: token))
        case "cookies" where segments.count == 2 && segments[1] == "set":
            guard let name = target.queryValue("name"), let value = target.queryValue("value"),
                  isCookieName(name), isCookieValue(value)
            else { return .badRequest("usage: /cookies/set?name=<token>&value=<cookie-octets>") }
            return .route(.setCookie(name: name, value: value))
        case "response-header" where segments.count == 1:
            guard let name = target.queryValue("name"), let value = target.queryValue("value"), isCookieName(name),
                  value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
            else { return .badRequest("usage: /response-header?name=<token>&value=<printable ASCII>") }
            return .route(.responseHeader(name: name, value: value))
        case "basic-auth" where segments.count == 3, "digest-auth" where segments.count == 3:
            let user = PercentEncoding.decode(segments[1])
            let password = PercentEncoding.decode(segments[2])
            return .route(first == "basic-auth" ? .basicAuth(user: user, password: password)
                          : .digestAuth(user: user, password: password))
        case "cached":
            guard segments.count == 2, let key = argument, !key.isEmpty,
                key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }),
                target.queryValue("vary").map(isCookieName) ?? true
            else { return .badRequest("usage: /cached/<key>[?cache-control=<value>&etag=0&lastmodified=1&vary=<name>]") }
            return .route(.cached(key: String(key), cacheControl: target.queryValue("cache-control"),
                                  etag: target.queryValue("etag").map(flag) ?? true,
                                  lastModified: target.queryValue("lastmodified").map(flag) ?? false,
                                  vary: target.queryValue("vary")))
        case "reset" where segments.count == 1:
            return .route(.reset)
        case "huge-headers":
            guard segments.count == 2, let kilobytes = argument.flatMap(RangeDecision.parseDigits), kilobytes <= 16_384
            else { return .badRequest("usage: /huge-headers/<kilobytes, at most 16384>") }
            return .route(.hugeHeaders(kilobytes: kilobytes))
        case "chunked":
            guard segments.count == 2, let bytes = argument.flatMap(RangeDecision.parseDigits),
                let chunkSize = number(target, "chunk", default: 16_384), (1...maximumPieceSize).contains(chunkSize)
            else { return .badRequest("usage: /chunked/<bytes>[?chunk=<size, 1...16777216>]") }
            return .route(.chunked(bytes: bytes, chunkSize: chunkSize))
        case "firehose":
            guard segments.count == 2, let key = argument, isKey(key), let bytes = number(target, "bytes") else {
                return .badRequest("usage: /firehose/<key>?bytes=<n>")
            }
            return .route(.firehose(key: String(key), bytes: bytes))
        case "events":
            let usage = ResolvedRoute.badRequest(
                "usage: /events/<key>?count=<n, at most 1000000>[&drop=<n, at least 1>&retry=<ms, at most 3600000>]")
            guard segments.count == 2, let key = argument, isKey(key),
                let count = number(target, "count"), count <= maximumEventCount
            else { return usage }
            var dropAfter: Int?
            if target.queryValue("drop") != nil {
                guard let drop = number(target, "drop"), drop >= 1 else { return usage }
                dropAfter = drop
            }
            var retry: Int?
            if target.queryValue("retry") != nil {
                guard let milliseconds = number(target, "retry"), milliseconds <= maximumMilliseconds else { return usage }
                retry = milliseconds
            }
            return .route(.events(key: String(key), count: count, dropAfter: dropAfter, retryMilliseconds: retry))
        case "hold-upload":
            guard segments.count == 2, let key = argument, isKey(key) else { return .badRequest("usage: /hold-upload/<key>") }
            return .route(.holdUpload(key: String(key)))
        default:
            return .notFound
        }
    }

    /// A per-test key of ``Route`` cases that count by key: letters, digits, `-` and `_`.
    private static func isKey(_ key: Substring) -> Bool {
        !key.isEmpty && key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
    }

    private static func entity(_ target: ServerRequestTarget, argument: Substring?) -> ResolvedRoute {
        let usage = ResolvedRoute.badRequest(
            "usage: /entity/<bytes>[?ranges=0&etag=<tag>&noetag=1&lastmodified=0&drip=<size>&interval=<ms>&holdfirst=1&version=<n>]"
        )
        guard let bytes = argument.flatMap(RangeDecision.parseDigits) else { return usage }
        let etag: String? = flag(target.queryValue("noetag")) ? nil : (target.queryValue("etag") ?? "\"v1\"")
        guard let interval = number(target, "interval", default: 0), interval <= maximumMilliseconds,
            let version = number(target, "version", default: 1), (1...maximumVersion).contains(version)
        else { return usage }
        var dripChunkSize: Int?
        if let text = target.queryValue("drip") {
            guard let size = RangeDecision.parseDigits(Substring(text)), (1...maximumPieceSize).contains(size) else {
                return usage
            }
            dripChunkSize = size
        }
        return .route(
            .entity(
                bytes: bytes,
                ranges: target.queryValue("ranges").map(flag) ?? true,
                etag: etag,
                lastModified: target.queryValue("lastmodified").map(flag) ?? true,
                dripChunkSize: dripChunkSize,
                dripIntervalMilliseconds: interval,
                holdFirst: target.queryValue("holdfirst").map(flag) ?? false,
                version: version
            )
        )
    }

    /// An HTTP token (RFC 9110), as a cookie name must be.
    private static func isCookieName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && !"()<>@,;:\\\"/[]?={}".utf8.contains(byte)
        }
    }

    /// RFC 6265's cookie-octets: printable ASCII but space, `"`, `,`, `;` and `\\`.
    private static func isCookieValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: ",")
                && byte != UInt8(ascii: ";") && byte != UInt8(ascii: "\\")
        }
    }

    /// `1`, `true`, `yes` and a bare name are true; anything else (and absence) is false.
    private static func flag(_ value: String?) -> Bool {
        guard let value else { return false }
        return value.isEmpty || value == "1" || value == "true" || value == "yes"
    }

    /// The query item as a non-negative number; `default` when absent, `nil` when present but invalid.
    private static func number(_ target: ServerRequestTarget, _ name: String, default defaultValue: Int? = nil) -> Int? {
        guard let text = target.queryValue(name) else { return defaultValue }
        return RangeDecision.parseDigits(Substring(text))
    }

    private static func redirectStatus(_ target: ServerRequestTarget) -> Int? {
        guard let status = number(target, "status", default: 302), (300...399).contains(status) else { return nil }
        return status
    }
}
