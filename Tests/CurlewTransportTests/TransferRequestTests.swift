import Foundation
import HTTPTypes
import Testing
@testable import CurlewTransport

@Suite("Request validation")
struct TransferRequestTests {
    @Test("URLs that are refused", arguments: [
        ("http://a.test/with space", TransferError.Code.badURL),
        ("http://a.test/\r\nX-Injected: 1", .badURL),
        ("http://a.test/\u{7F}", .badURL),
        ("file:///etc/passwd", .unsupportedURL),
        ("ftp://a.test/file", .unsupportedURL),
        ("gopher://a.test/", .unsupportedURL),
        ("http:///nohost", .badURL),
        ("not a url", .badURL),
        ("/relative/path", .badURL),
        ("", .badURL),
    ])
    func refusedURLs(_ url: String, _ code: TransferError.Code) {
        let error = #expect(throws: TransferError.self) { try TransferRequest(method: "GET", url: url) }
        #expect(error?.code == code)
    }

    @Test("header values with CR, LF or NUL are refused", arguments: ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b"])
    func headerInjection(_ value: String) {
        let error = #expect(throws: TransferError.self) {
            try TransferRequest(method: "GET", url: "http://a.test/", headers: [("X-Value", value)])
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.failingURL?.absoluteString == "http://a.test/")
    }

    @Test("invalid header names and methods are refused", arguments: [("Bad Name", "GET"), ("X:Colon", "GET"), ("X-Ok", "G ET"), ("X-Ok", "")])
    func invalidNames(_ name: String, _ method: String) {
        let error = #expect(throws: TransferError.self) {
            try TransferRequest(method: method, url: "http://a.test/", headers: [(name, "v")])
        }
        #expect(error?.code == .invalidRequest)
    }

    @Test func validRequestKeepsEverything() throws {
        let request = try TransferRequest(method: "PATCH", url: "HTTPS://a.test:8443/p/a%20th?q=1&r=%2F",
                                          headers: [("X-One", "1"), ("Accept", "application/json")])
        #expect(request.head.method == .patch)
        #expect(request.head.scheme == "https")
        #expect(request.head.authority == "a.test:8443")
        #expect(request.head.path == "/p/a%20th?q=1&r=%2F")
        #expect(request.head.headerFields[.accept] == "application/json")
    }

    @Test func ipv6Authority() throws {
        let target = try RequestTarget(validating: "http://[::1]:8080/x")
        #expect(target.string == "http://[::1]:8080/x")
    }

    @Test func emptyPathBecomesSlash() throws {
        #expect(try RequestTarget(validating: "http://a.test").string == "http://a.test/")
    }

    @Test func httpFieldsCannotCarryNewlines() {
        // swift-http-types turns CR/LF into spaces, so requests built from HTTPFields are safe too.
        let field = HTTPField(name: .accept, value: "a\r\nX-Injected: 1")
        #expect(!field.value.contains("\n"))
    }
}

@Suite("HTTPRequest validation")
struct HTTPRequestValidationTests {
    @Test("heads that are refused", arguments: [
        (HTTPRequest(method: .get, scheme: "file", authority: "", path: "/etc/passwd"), TransferError.Code.unsupportedURL),
        (HTTPRequest(method: .get, scheme: "ftp", authority: "a.test", path: "/"), .unsupportedURL),
        (HTTPRequest(method: .get, scheme: nil, authority: "a.test", path: "/"), .badURL),
        (HTTPRequest(method: .get, scheme: "http", authority: nil, path: "/"), .badURL),
        (HTTPRequest(method: .get, scheme: "http", authority: "a.test/evil", path: "/"), .badURL),
        (HTTPRequest(method: .get, scheme: "http", authority: "a test", path: "/"), .badURL),
        (HTTPRequest(method: .get, scheme: "http", authority: "a.test", path: "/a\r\nX-Injected: 1"), .badURL),
        (HTTPRequest(method: .get, scheme: "http", authority: "a.test", path: "relative"), .badURL),
        (HTTPRequest(method: .get, scheme: "http", authority: "a.test", path: "/x#fragment"), .badURL),
    ])
    func refused(_ head: HTTPRequest, _ code: TransferError.Code) {
        let error = #expect(throws: TransferError.self) { try RequestTarget(validating: head) }
        #expect(error?.code == code)
    }

    @Test func acceptedHeadKeepsItsParts() throws {
        let target = try RequestTarget(validating: HTTPRequest(method: .get, scheme: "HTTP", authority: "127.0.0.1:8080", path: nil))
        #expect(target.string == "http://127.0.0.1:8080/")
    }
}
