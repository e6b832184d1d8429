import HTTPTypes
import Testing
@testable import CurlewTransport

@Suite("Wire tracer redaction")
struct WireTracerTests {
    @Test("secret field values are redacted; everything else is kept byte for byte", arguments: [
        ("Authorization: Basic YWRhOnB3", "Authorization: <redacted>"),
        ("authorization:Bearer x", "authorization: <redacted>"),
        ("Proxy-Authorization: Basic x", "Proxy-Authorization: <redacted>"),
        ("Cookie: a=b; c=d", "Cookie: <redacted>"),
        ("set-cookie: session=abc; Path=/", "set-cookie: <redacted>"),
        ("[HTTP/2] [1] [cookie: a=b]", "[HTTP/2] [1] [cookie: <redacted>]"),
        ("[HTTP/2] [1] [authorization: Bearer t]", "[HTTP/2] [1] [authorization: <redacted>]"),
        ("X-Authorization-Hint: none", "X-Authorization-Hint: none"),
        ("Cookies are nice", "Cookies are nice"),
        ("Connected to 127.0.0.1 (127.0.0.1) port 80", "Connected to 127.0.0.1 (127.0.0.1) port 80"),
        ("GET / HTTP/1.1\r\nHost: a\r\nCookie: x=1\r\nAccept: */*\r\n",
         "GET / HTTP/1.1\r\nHost: a\r\nCookie: <redacted>\r\nAccept: */*\r\n"),
        ("Authorization: é secret\nCookie: ü", "Authorization: <redacted>\nCookie: <redacted>"),
    ])
    func redaction(_ text: String, _ expected: String) {
        #expect(WireTracer.redacting(text, secretHeaderNames: []) == expected)
    }

    @Test("headers marked secret are redacted too, in any case, also in HTTP/2 notes; only those", arguments: [
        ("X-API-Key: k3y", "X-API-Key: <redacted>"),
        ("x-api-key:k3y", "x-api-key: <redacted>"),
        ("GET / HTTP/1.1\r\nX-Api-Key: k3y\r\nAccept: */*\r\n", "GET / HTTP/1.1\r\nX-Api-Key: <redacted>\r\nAccept: */*\r\n"),
        ("[HTTP/2] [1] [x-api-key: k3y]", "[HTTP/2] [1] [x-api-key: <redacted>]"),
        ("X-API-Key-Hint: none", "X-API-Key-Hint: none"),
        ("X-Session: s\nCookie: c", "X-Session: <redacted>\nCookie: <redacted>"),
        ("the x-api-key header", "the x-api-key header"),
    ])
    func secretHeaderNames(_ text: String, _ expected: String) throws {
        let names: Set<HTTPField.Name> = [try #require(HTTPField.Name("X-API-Key")), try #require(HTTPField.Name("X-Session"))]
        #expect(WireTracer.redacting(text, secretHeaderNames: names) == expected)
        #expect(WireTracer.redacting(text, secretHeaderNames: []) == text || text.lowercased().contains("cookie"))
    }

    @Test("events print as curl's verbose output does")
    func descriptions() {
        #expect(WireTracer.Event.requestHead("GET / HTTP/1.1\r\nHost: a").description == "> GET / HTTP/1.1\n> Host: a")
        #expect(WireTracer.Event.responseHeader("HTTP/1.1 200 OK").description == "< HTTP/1.1 200 OK")
        #expect(WireTracer.Event.note("Connected").description == "* Connected")
        #expect(WireTracer.Event.responseBody(bytes: 12).description == "< [12 body bytes]")
    }
}
