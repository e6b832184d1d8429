@testable import Curlew
import Testing

/// What a client span says of a request's target: `url.full` without secrets, `server.address` and
/// `server.port` (no I/O).
@Suite("Span target")
struct SpanTargetTests {
    static func target(_ scheme: String?, _ authority: String?, _ path: String?) -> SpanTarget {
        SpanTarget(HTTPRequest(method: .get, scheme: scheme, authority: authority, path: path))
    }

    @Test("url.full keeps the path and plain parameters, redacts secret values whatever their case")
    func redactsQueryValues() {
        let target = Self.target("https", "api.example.com", "/v1/items?page=2&Access_Token=abc&sig=xyz&q=token%3Dx&flag&X-Amz-Signature=s")
        #expect(target.full == "https://api.example.com/v1/items?page=2&Access_Token=REDACTED&sig=REDACTED&q=token%3Dx&flag&X-Amz-Signature=REDACTED")
        #expect(target.address == "api.example.com")
        #expect(target.port == 443)
    }

    @Test("credentials in the authority become REDACTED:REDACTED; a fragment is dropped")
    func redactsCredentials() {
        let target = Self.target("http", "ada:secret@example.com:8080", "/a?b=c#frag")
        #expect(target.full == "http://REDACTED:REDACTED@example.com:8080/a?b=c")
        #expect(target.address == "example.com")
        #expect(target.port == 8080)
    }

    @Test("IPv6 addresses lose their brackets; the scheme's default port; no authority")
    func addresses() {
        let v6 = Self.target("http", "[::1]:9000", "/")
        #expect(v6.address == "::1" && v6.port == 9000)
        let v6Default = Self.target("http", "[2001:db8::1]", "/")
        #expect(v6Default.address == "2001:db8::1" && v6Default.port == 80)
        let none = Self.target("ftp", nil, "/x")
        #expect(none.address == nil && none.port == nil)
        #expect(none.full == "ftp:///x")
    }

    @Test("a query without secrets, or empty, is left as it is")
    func plainQueries() {
        #expect(SpanTarget.redactingQuery("/p") == "/p")
        #expect(SpanTarget.redactingQuery("/p?") == "/p?")
        #expect(SpanTarget.redactingQuery("/p?a=1&&b=2") == "/p?a=1&&b=2")
        #expect(SpanTarget.redactingQuery("/p?key=") == "/p?key=REDACTED")
    }
}
