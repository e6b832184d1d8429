import HTTPTypes
import Testing
@testable import CurlewTransport

@Suite("Redirect planner")
struct RedirectPlannerTests {
    private func attempt(_ method: HTTPRequest.Method, _ url: String = "http://a.test/start",
                         fields: HTTPFields = [.authorization: "Bearer x", .contentType: "text/plain"]) throws -> Attempt {
        Attempt(target: try RequestTarget(validating: url), method: method, headerFields: fields,
                sendsBody: method != .get && method != .head, redirectCount: 0, resume: nil)
    }

    @Test("method and body after each status", arguments: [
        (HTTPRequest.Method.post, 301, HTTPRequest.Method.get, false),
        (.post, 302, .get, false),
        (.post, 303, .get, false),
        (.put, 303, .get, false),
        (.head, 303, .head, false),
        (.post, 307, .post, true),
        (.put, 308, .put, true),
        (.put, 301, .put, true),
        (.delete, 302, .delete, true),
    ])
    func methodRewriting(from method: HTTPRequest.Method, status: Int, to expected: HTTPRequest.Method, keepsBody: Bool) throws {
        let next = try RedirectPlanner.next(after: try self.attempt(method), status: status, location: "http://a.test/next", secretHeaderNames: [])
        #expect(next.method == expected)
        #expect(next.sendsBody == (keepsBody && method != .head))
        #expect(next.redirectCount == 1)
        #expect(next.target.string == "http://a.test/next")
        if expected == .get && method != .get {
            #expect(next.headerFields[.contentType] == nil)
        }
    }

    @Test func credentialsStayOnTheSameOrigin() throws {
        let next = try RedirectPlanner.next(after: try self.attempt(.get), status: 302, location: "http://a.test:80/other", secretHeaderNames: [])
        #expect(next.headerFields[.authorization] == "Bearer x")
    }

    @Test("credentials are dropped across origins", arguments: ["https://a.test/x", "http://b.test/x", "http://a.test:8080/x"])
    func credentialsDroppedAcrossOrigins(_ location: String) throws {
        let next = try RedirectPlanner.next(after: try self.attempt(.get), status: 302, location: location, secretHeaderNames: [])
        #expect(next.headerFields[.authorization] == nil)
    }

    @Test("a header marked secret is dropped across origins beside the credentials, and kept on the same origin")
    func secretHeaderNames() throws {
        let apiKey = try #require(HTTPField.Name("X-API-Key"))
        let note = try #require(HTTPField.Name("X-Note"))
        let start = try self.attempt(.put, fields: [.authorization: "Bearer x", apiKey: "k3y", note: "n"])
        let same = try RedirectPlanner.next(after: start, status: 307, location: "HTTP://A.TEST:80/other", secretHeaderNames: [apiKey])
        #expect(same.headerFields[apiKey] == "k3y" && same.headerFields[.authorization] == "Bearer x")
        for location in ["https://a.test/x", "http://b.test/x", "http://a.test:8080/x", "http://a.test./x"] {
            let next = try RedirectPlanner.next(after: start, status: 307, location: location, secretHeaderNames: [apiKey])
            #expect(next.headerFields[apiKey] == nil, "\(location)")
            #expect(next.headerFields[.authorization] == nil, "\(location)")
            #expect(next.headerFields[note] == "n", "\(location): an unmarked header is kept")
            // Without the mark the header is an ordinary one and follows.
            let unmarked = try RedirectPlanner.next(after: start, status: 307, location: location, secretHeaderNames: [])
            #expect(unmarked.headerFields[apiKey] == "k3y")
        }
    }

    @Test("an origin is scheme, host and port: the default port and the host's ASCII case are normalised, nothing else", arguments: [
        ("http://a.test/x", "HTTP://A.TEST:80/y", true),
        ("https://a.test/", "https://a.test:443/", true),
        ("http://a.test:/", "http://a.test/", true),
        ("http://ada:pw@a.test/", "http://a.test/", true),
        ("http://[::1]/", "http://[::1]:80/", true),
        ("http://[FE80::1]:8080/", "http://[fe80::1]:8080/", true),
        ("http://a.test/", "https://a.test/", false),
        ("http://a.test/", "http://a.test:443/", false),
        ("https://a.test/", "https://a.test:80/", false),
        ("http://a.test/", "http://a.test./", false),
        ("http://a.test/", "http://b.a.test/", false),
        ("http://[::1]:8080/", "http://[::1]:8081/", false),
        ("http://[::1]/", "http://127.0.0.1/", false),
    ])
    func origins(_ first: String, _ second: String, _ same: Bool) throws {
        let a = RedirectPlanner.origin(of: try RequestTarget(validating: first))
        let b = RedirectPlanner.origin(of: try RequestTarget(validating: second))
        #expect((a == b) == same, "\(a) vs \(b)")
    }

    @Test("non-http targets are refused", arguments: ["file:///etc/passwd", "ftp://a.test/x", "gopher://a.test", "javascript:alert(1)"])
    func refusesOtherSchemes(_ location: String) throws {
        let error = #expect(throws: TransferError.self) {
            try RedirectPlanner.next(after: try self.attempt(.get), status: 302, location: location, secretHeaderNames: [])
        }
        #expect(error?.code == .unsupportedURL || error?.code == .badURL)
        #expect(error?.message.contains("Refused redirect") == true)
    }
}
