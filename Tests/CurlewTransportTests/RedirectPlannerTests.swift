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
        let next = try RedirectPlanner.next(after: try self.attempt(method), status: status, location: "http://a.test/next")
        #expect(next.method == expected)
        #expect(next.sendsBody == (keepsBody && method != .head))
        #expect(next.redirectCount == 1)
        #expect(next.target.string == "http://a.test/next")
        if expected == .get && method != .get {
            #expect(next.headerFields[.contentType] == nil)
        }
    }

    @Test func credentialsStayOnTheSameOrigin() throws {
        let next = try RedirectPlanner.next(after: try self.attempt(.get), status: 302, location: "http://a.test:80/other")
        #expect(next.headerFields[.authorization] == "Bearer x")
    }

    @Test("credentials are dropped across origins", arguments: ["https://a.test/x", "http://b.test/x", "http://a.test:8080/x"])
    func credentialsDroppedAcrossOrigins(_ location: String) throws {
        let next = try RedirectPlanner.next(after: try self.attempt(.get), status: 302, location: location)
        #expect(next.headerFields[.authorization] == nil)
    }

    @Test("non-http targets are refused", arguments: ["file:///etc/passwd", "ftp://a.test/x", "gopher://a.test", "javascript:alert(1)"])
    func refusesOtherSchemes(_ location: String) throws {
        let error = #expect(throws: TransferError.self) {
            try RedirectPlanner.next(after: try self.attempt(.get), status: 302, location: location)
        }
        #expect(error?.code == .unsupportedURL || error?.code == .badURL)
        #expect(error?.message.contains("Refused redirect") == true)
    }
}
