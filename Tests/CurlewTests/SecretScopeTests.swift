import CurlewTransport
import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import Testing
@testable import Curlew
import CurlewTesting

/// Which requests carry a manager's secrets: the decision (base URL, path → same origin or not) and
/// what a request to another origin is sent without. No I/O: the managers run on a stub and send
/// nothing.
@Suite("RequestOperationManager: secrets bound to the base URL's origin")
struct SecretScopeTests {
    /// A manager on a stub with every kind of secret: Basic credentials, a cookie jar, a bearer
    /// token and a header marked secret on the serializer.
    static func manager(_ base: String?) throws -> RequestOperationManager {
        let api = RequestOperationManager(baseURL: base.flatMap { URL(string: $0) }, transport: StubTransport(),
                                          cookies: .inMemory)
        api.credentials = TransferCredentials(user: "ada", password: "s3cret")
        var serializer = HTTPRequestSerializer()
        try serializer.setBearerToken("t0ken")
        try serializer.setValue("k3y", forSecretHeader: "X-API-Key")
        api.requestSerializer = serializer
        return api
    }

    /// Whether the request the manager builds for `path` carries the secrets: all of them (`true`)
    /// or none (`false`); `nil` when the path makes no URL.
    static func carriesSecrets(_ api: RequestOperationManager, _ path: String,
                               sourceLocation: SourceLocation = #_sourceLocation) -> Bool? {
        guard let request = try? api.request(.get, path) else { return nil }
        let fields = request.head.headerFields
        let apiKey = HTTPField.Name("X-API-Key")
        // The serializer's bearer token, or Basic credentials from user information in the URL.
        let carried = [fields[.authorization] != nil, apiKey.map { fields[$0] == "k3y" } ?? false,
                       request.options.credentials != nil, request.options.cookieJar != nil]
        #expect(Set(carried).count == 1, "\(path): only some secrets were kept: \(carried)", sourceLocation: sourceLocation)
        if carried[0], let base = api.baseURL {
            #expect(Origin(request.head) == Origin(base), "\(path) took the secrets to \(request.url?.absoluteString ?? "?")",
                    sourceLocation: sourceLocation)
        }
        #expect(apiKey.map { request.options.secretHeaderNames.contains($0) } == true,
                "the transfer is not told X-API-Key is secret", sourceLocation: sourceLocation)
        return carried[0]
    }

    @Test("a base URL with a path: what resolves to its origin carries the secrets, nothing else does", arguments: [
        ("echo", true),
        ("/echo", true),
        ("../echo", true),
        ("%2e%2e/echo", true),
        ("//127.0.0.1:8080/x", true),
        ("HTTP://127.0.0.1:8080/x", true),
        ("http://127.0.0.1:8080/x", true),
        ("http://ada:pw@127.0.0.1:8080/x", true),
        ("//127.0.0.2:8080/x", false),
        ("http://127.0.0.2:8080/x", false),
        ("HTTP://127.0.0.2:8080/x", false),
        ("http://127.0.0.1:8081/x", false),
        ("http://127.0.0.1/x", false),
        ("https://127.0.0.1:8080/x", false),
        ("http://127.0.0.1:8080@127.0.0.2:8080/x", false),
        ("http://localhost:8080/x", false),
    ])
    func baseWithPath(_ path: String, _ same: Bool) throws {
        #expect(Self.carriesSecrets(try Self.manager("http://127.0.0.1:8080/api/v1"), path) == same)
    }

    @Test("a base URL without a path, hosts in any case, default ports, trailing dots", arguments: [
        ("http://Example.COM", "x", true),
        ("http://Example.COM", "http://example.com:80/x", true),
        ("http://Example.COM", "HTTP://EXAMPLE.COM/x", true),
        ("http://Example.COM", "//EXAMPLE.com/x", true),
        ("http://Example.COM", "http://example.com:/x", true),
        ("http://Example.COM", "http://example.com./x", false),
        ("http://Example.COM", "http://example.com:8080/x", false),
        ("http://Example.COM", "https://example.com/x", false),
        ("http://Example.COM", "https://example.com:80/x", false),
        ("http://Example.COM", "http://sub.example.com/x", false),
        ("http://Example.COM", "http://example.com.evil.test/x", false),
        ("https://example.com:443/", "https://EXAMPLE.COM/x", true),
        ("https://example.com:443/", "//example.com/x", true),
        ("https://example.com:443/", "http://example.com:443/x", false),
        ("https://example.com:443/", "https://example.com:8443/x", false),
        ("http://ada:pw@example.com/", "x", true),
        ("http://ada:pw@example.com/", "http://example.com/x", true),
        ("http://[::1]:8080/", "x", true),
        ("http://[::1]:8080/", "//[::1]:8080/x", true),
        ("http://[::1]:8080/", "http://[::1]/x", false),
        ("http://[::1]:8080/", "http://[::2]:8080/x", false),
        ("http://[::1]:8080/", "http://127.0.0.1:8080/x", false),
    ])
    func origins(_ base: String, _ path: String, _ same: Bool) throws {
        #expect(Self.carriesSecrets(try Self.manager(base), path) == same)
    }

    @Test("odd paths either make no URL or keep the secrets on the base URL's origin",
          arguments: ["javascript:alert(1)", "\\\\127.0.0.2\\x", "///127.0.0.2/x", "http://", "http:127.0.0.2/x",
                      "mailto:ada@127.0.0.2", "http://127.0.0.2%2f@127.0.0.1:8080/x"])
    func oddPaths(_ path: String) throws {
        // carriesSecrets checks that a request carrying them goes to the base URL's origin.
        _ = Self.carriesSecrets(try Self.manager("http://127.0.0.1:8080/api/"), path)
    }

    @Test("without a base URL each request's own origin is its origin: every URL carries the secrets")
    func noBase() throws {
        let api = try Self.manager(nil)
        for url in ["http://127.0.0.1:8080/x", "https://example.com/x", "http://localhost:1/x"] {
            #expect(Self.carriesSecrets(api, url) == true, "\(url)")
        }
    }

    @Test("a base URL with no http origin binds the secrets to nothing")
    func baseWithoutOrigin() throws {
        let scope = SecretScope(baseURL: URL(string: "ftp://example.com/"))
        #expect(scope.baseOrigin == nil)
        for string in ["ftp://example.com/x", "http://example.com/x"] {
            let url = try #require(URL(string: string))
            #expect(!scope.admits(HTTPRequest(url: url)))
        }
    }

    @Test("a request you build follows the same rule: its own Authorization, Cookie and marked headers are withheld elsewhere")
    func builtRequests() throws {
        let api = try Self.manager("http://127.0.0.1:8080/")
        let apiKey = try #require(HTTPField.Name("X-API-Key"))
        let note = try #require(HTTPField.Name("X-Note"))
        for (url, same) in [("http://127.0.0.1:8080/x", true), ("http://127.0.0.2:8080/x", false)] {
            var request = TransferRequest(url: try #require(URL(string: url)))
            request.head.headerFields[.authorization] = "Bearer mine"
            request.head.headerFields[.cookie] = "a=b"
            request.head.headerFields[.proxyAuthorization] = "Basic cHJveHk="
            request.head.headerFields[apiKey] = "mine"
            request.head.headerFields[note] = "kept"
            for prepared in [api.prepared(request), api.operation(with: request, success: nil, failure: nil).request] {
                let fields = prepared.head.headerFields
                #expect((fields[.authorization] != nil) == same, "\(url)")
                #expect((fields[.cookie] != nil) == same, "\(url)")
                #expect((fields[.proxyAuthorization] != nil) == same, "\(url)")
                #expect((fields[apiKey] != nil) == same, "\(url): the serializer's secret name applies to built requests")
                #expect(fields[note] == "kept")
                #expect((prepared.options.credentials != nil) == same && (prepared.options.cookieJar != nil) == same)
            }
        }
        // Credentials in a URL become an Authorization field, withheld like any other.
        let userinfo = TransferRequest(url: try #require(URL(string: "http://ada:pw@127.0.0.2:8080/x")))
        #expect(userinfo.head.headerFields[.authorization] != nil)
        #expect(api.prepared(userinfo).head.headerFields[.authorization] == nil)
    }

    @Test("a multipart request to another origin is sent without the marked header too")
    func multipart() throws {
        let api = try Self.manager("http://127.0.0.1:8080/")
        let apiKey = try #require(HTTPField.Name("X-API-Key"))
        let same = try api.multipartRequest(.post, "upload", parameters: ["a": "b"]) { _ in }
        #expect(same.head.headerFields[apiKey] == "k3y" && same.options.secretHeaderNames.contains(apiKey))
        let other = try api.multipartRequest(.post, "http://127.0.0.2:8080/upload", parameters: ["a": "b"]) { _ in }
        #expect(other.head.headerFields[apiKey] == nil && other.head.headerFields[.authorization] == nil)
    }

    @Test("a request sent without secrets is logged at debug, naming what was withheld and never a value")
    func debugLine() throws {
        let api = try Self.manager("http://127.0.0.1:8080/")
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "curlew.tests", factory: { _ in handler })
        logger.logLevel = .debug
        api.logger = logger

        _ = try api.request(.get, "x")
        #expect(handler.entries.isEmpty, "a same-origin request logged \(handler.entries)")
        _ = try api.request(.get, "http://127.0.0.2:8080/x")
        let messages = handler.entries.map { "\($0.level) \($0.message)" }
        #expect(messages.count == 1, "\(messages)")
        let line = try #require(messages.first)
        #expect(line.hasPrefix("debug GET http://127.0.0.2:8080/x is sent without "), "\(line)")
        for withheld in ["credentials", "cookies", "Authorization", "X-API-Key"] {
            #expect(line.contains(withheld), "\(line)")
        }
        #expect(line.contains("http://127.0.0.2:8080") && line.contains("http://127.0.0.1:8080"), "\(line)")
        for secret in ["t0ken", "k3y", "s3cret"] {
            #expect(!line.contains(secret), "\(line)")
        }
    }

    @Test("an origin is what curl is handed: the URL and the request head made from it agree", arguments: [
        "http://Example.COM/x", "HTTP://example.com:80/x", "https://example.com:443/", "http://[::1]:8080/",
        "http://[::FFFF:7F00:1]/", "http://ada:pw@example.com:8080/x?y#z", "https://example.com.:8443/",
    ])
    func originOfURLAndHead(_ string: String) throws {
        let url = try #require(URL(string: string))
        let fromURL = try #require(Origin(url))
        #expect(Origin(TransferRequest(url: url).head) == fromURL)
        #expect(fromURL.scheme == fromURL.scheme.lowercased() && fromURL.host == fromURL.host.lowercased())
    }

    @Test("origins compare scheme, ASCII-lowercased host and port, nothing else")
    func originFields() throws {
        func origin(_ string: String) throws -> Origin {
            let url = try #require(URL(string: string))
            return try #require(Origin(url))
        }
        #expect(try origin("HTTP://EXAMPLE.com/a").description == "http://example.com:80")
        #expect(try origin("https://example.com/").description == "https://example.com:443")
        #expect(try origin("http://[::1]:8080/").host == "[::1]")
        #expect(try origin("http://[::1]:8080/").port == 8080)
        #expect(try origin("http://example.com./").host == "example.com.")
        for string in ["ftp://example.com/", "relative/path"] {
            let url = try #require(URL(string: string))
            #expect(Origin(url) == nil)
        }
    }
}
