import HTTPTypes

/// What a client span says of a request's target, after OpenTelemetry's HTTP client conventions
/// (`url.full`, `server.address`, `server.port`), with no secret in it: credentials in the authority
/// become `REDACTED:REDACTED`, the values of secret query parameters `REDACTED`, and a fragment is
/// dropped. Made from the request head in one pass over its strings.
struct SpanTarget: Hashable, Sendable {
    /// The query parameters whose values are redacted, lowercased: OpenTelemetry's (`AWSAccessKeyId`,
    /// `Signature`, `sig`, `X-Goog-Signature`), AWS's presigned-URL ones, and the usual names of
    /// tokens, keys and passwords. Names are compared without regard to ASCII case.
    static let redactedQueryNames: Set<String> = [
        "awsaccesskeyid", "signature", "sig", "x-goog-signature", "x-goog-credential",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token",
        "access_token", "refresh_token", "id_token", "token", "code", "client_secret", "secret",
        "api_key", "apikey", "key", "password", "passwd", "pwd", "auth",
    ]

    /// The placeholder of a redacted value.
    static let redacted = "REDACTED"

    /// `url.full`: scheme, authority, path and query.
    let full: String
    /// `server.address`: the host, without brackets for an IPv6 address; `nil` without an authority.
    let address: String?
    /// `server.port`: the port in the authority, or the scheme's default (80, 443); `nil` when neither.
    let port: Int?

    init(_ head: HTTPRequest) {
        let scheme = head.scheme ?? ""
        var authority = head.authority ?? ""
        // Credentials never reach the span: the request's initializers move them to a header, and an
        // authority set by hand with them is redacted all the same.
        if let at = authority.lastIndex(of: "@") {
            authority = "\(Self.redacted):\(Self.redacted)" + authority[at...]
        }
        let hostAndPort = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority[...]
        let (host, port) = Self.split(hostAndPort)
        self.address = host.isEmpty ? nil : host
        self.port = port ?? Self.defaultPort(scheme)
        self.full = "\(scheme)://\(authority)\(Self.redactingQuery(head.path ?? ""))"
    }

    /// `host` and `port` of `host[:port]`, `[v6]` or `[v6]:port`.
    private static func split(_ hostAndPort: Substring) -> (host: String, port: Int?) {
        if hostAndPort.first == "[", let close = hostAndPort.firstIndex(of: "]") {
            let host = hostAndPort[hostAndPort.index(after: hostAndPort.startIndex)..<close]
            let rest = hostAndPort[hostAndPort.index(after: close)...]
            return (String(host), rest.first == ":" ? Int(rest.dropFirst()) : nil)
        }
        guard let colon = hostAndPort.lastIndex(of: ":") else { return (String(hostAndPort), nil) }
        return (String(hostAndPort[..<colon]), Int(hostAndPort[hostAndPort.index(after: colon)...]))
    }

    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    /// `path` without its fragment, each secret query parameter's value replaced.
    static func redactingQuery(_ path: String) -> String {
        let withoutFragment = path.firstIndex(of: "#").map { path[..<$0] } ?? path[...]
        guard let question = withoutFragment.firstIndex(of: "?") else { return String(withoutFragment) }
        var result = String(withoutFragment[...question])
        var first = true
        for item in withoutFragment[withoutFragment.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false) {
            if !first { result += "&" }
            first = false
            guard let equals = item.firstIndex(of: "="),
                  Self.redactedQueryNames.contains(item[..<equals].lowercased()) else {
                result += item
                continue
            }
            result += item[...equals]
            result += Self.redacted
        }
        return result
    }
}
