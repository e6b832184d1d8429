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

@Suite("Request validation: ports, credentials, header values")
struct RequestConsistencyTests {
    @Test("ports outside 1...65535 are a bad URL up front", arguments: ["http://a.test:0/", "http://a.test:65536/", "http://a.test:70000/"])
    func portsFromStrings(_ url: String) {
        let error = #expect(throws: TransferError.self) { try TransferRequest(method: "GET", url: url) }
        #expect(error?.code == .badURL)
    }

    @Test("an HTTPRequest's authority with a port outside 1...65535 is a bad URL",
          arguments: ["a.test:0", "a.test:65536", "a.test:99999999", "a.test:8x", "[::1]:70000", "a.test:80:80"])
    func portsInAuthorities(_ authority: String) {
        let head = HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/")
        #expect(throws: TransferError.self) { try RequestTarget(validating: head) }
    }

    @Test("valid ports and authorities pass", arguments: ["a.test", "a.test:1", "a.test:65535", "[::1]", "[::1]:8080", "a.test:"])
    func validAuthorities(_ authority: String) throws {
        let head = HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/")
        #expect(try RequestTarget(validating: head).authority == authority)
    }

    @Test func credentialsInAURLBecomeBasicAuthorization() throws {
        let fromURL = TransferRequest(url: try #require(URL(string: "http://us%40er:p%3Ass@a.test/x")))
        #expect(fromURL.head.headerFields[.authorization] == "Basic " + Data("us@er:p:ss".utf8).base64EncodedString())
        #expect(fromURL.head.authority == "a.test")
        let fromString = try TransferRequest(method: "GET", url: "http://user:secret@a.test/x")
        #expect(fromString.head.headerFields[.authorization] == "Basic " + Data("user:secret".utf8).base64EncodedString())
        #expect(fromString.head.authority == "a.test")
        #expect(fromString.url?.absoluteString == "http://a.test/x")
        // The request's own Authorization wins.
        let own = try TransferRequest(method: "GET", url: "http://user:secret@a.test/", headers: [("Authorization", "Bearer t")])
        #expect(own.head.headerFields[.authorization] == "Bearer t")
    }

    @Test func credentialsInAnAuthorityAreRefused() {
        let head = HTTPRequest(method: .get, scheme: "http", authority: "user:pass@a.test", path: "/")
        let error = #expect(throws: TransferError.self) { try RequestTarget(validating: head) }
        #expect(error?.code == .badURL)
    }

    @Test func aURLWithoutSchemeMakesARequestThatFailsInsteadOfTrapping() throws {
        let request = TransferRequest(url: try #require(URL(string: "/relative")))
        let error = #expect(throws: TransferError.self) { try RequestTarget(validating: request.head) }
        #expect(error?.code == .badURL)
    }

    /// Both ways of setting a header keep CR, LF and NUL off the wire: the string API refuses them,
    /// HTTPFields (swift-http-types) turns them into spaces.
    @Test("header values: refused by the string API, made spaces by HTTPFields", arguments: ["a\r\nX-Injected: 1", "a\u{0}b"])
    func headerValuesAgree(_ value: String) throws {
        var request = TransferRequest(url: try #require(URL(string: "http://a.test/")))
        let name = try #require(HTTPField.Name("X-Value"))
        let error = #expect(throws: TransferError.self) { try request.setHeaderField("X-Value", value: value) }
        #expect(error?.code == .invalidRequest)
        #expect(request.head.headerFields[name] == nil)
        request.head.headerFields[name] = value
        let sent = try #require(request.head.headerFields[name])
        let smuggles = sent.utf8.contains { (byte: UInt8) -> Bool in byte == 0x0D || byte == 0x0A || byte == 0 }
        #expect(!smuggles)
        try request.setHeaderField("X-Value", value: "fine")
        #expect(request.head.headerFields[name] == "fine")
    }
}
