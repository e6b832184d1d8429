import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import InMemoryLogging
import Logging
import Testing

/// A manager's secrets — curl's Basic credentials or a bearer token, a header marked secret, the
/// cookie jar — reach the base URL's origin and no other, on every backend: a path that resolves
/// elsewhere is sent without them, and so is a redirect or a request built by hand. The other
/// origins are all on 127.0.0.1's servers: another host name (`localhost`), another port (a second
/// test server), another scheme (the TLS listener).
@Suite("RequestOperationManager: secrets stay on the base URL's origin")
struct OriginBindingTests {
    /// A second server on other ports of 127.0.0.1: another origin.
    static let otherServer: Result<TestServer, any Error> = Result {
        try TestServer.start(TestServer.Configuration(enableTLS: false, enableH2C: false))
    }

    /// Which `Authorization` the manager sends.
    enum Authorization: CaseIterable, CustomStringConvertible {
        /// curl's, from the manager's `credentials` (Basic: sent with the first request).
        case credentials
        /// The request serializer's bearer token.
        case bearerToken

        var expected: String {
            switch self {
            case .credentials: return "Basic " + Data("ada:s3cret".utf8).base64EncodedString()
            case .bearerToken: return "Bearer t0ken"
            }
        }

        var description: String { self == .credentials ? "credentials" : "bearer token" }
    }

    /// Gives `api` every kind of secret: `authorization`, `X-API-Key: k3y` marked secret, and the
    /// cookie `session=abc` from the base URL's origin; and trusts the test CA.
    static func arm(_ api: RequestOperationManager, with authorization: Authorization) async throws {
        var serializer = HTTPRequestSerializer()
        try serializer.setValue("k3y", forSecretHeader: "X-API-Key")
        switch authorization {
        case .credentials: api.credentials = TransferCredentials(user: "ada", password: "s3cret", schemes: .basic)
        case .bearerToken: try serializer.setBearerToken("t0ken")
        }
        api.requestSerializer = serializer
        var policy = SecurityPolicy()
        policy.trustedRootsFile = TestServer.caCertificatePath
        api.securityPolicy = policy
        _ = try await api.get(Route.setCookie(name: "session", value: "abc").path, as: Echo.self)
    }

    /// Checks that `echo` shows all the secrets (`carried`) or none of them.
    static func expect(_ echo: Echo, carried: Bool, _ authorization: Authorization, _ what: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let seen = (echo.headerValues("Authorization"), echo.headerValues("X-API-Key"), echo.headerValues("Cookie"))
        if carried {
            #expect(seen.0 == [authorization.expected] && seen.1 == ["k3y"] && seen.2 == ["session=abc"],
                    "\(what) (\(authorization)): \(seen)", sourceLocation: sourceLocation)
        } else {
            #expect(seen.0.isEmpty && seen.1.isEmpty && seen.2.isEmpty,
                    "\(what) (\(authorization)) got secrets: \(seen)", sourceLocation: sourceLocation)
        }
    }

    /// The host (and port) an echo says the request was sent to, lowercased.
    static func host(_ echo: Echo) -> String {
        (echo.headerValues("Host").first ?? echo.headerValues(":authority").first ?? "").lowercased()
    }

    @Test("paths on another origin are sent without the secrets; paths on the base URL's origin carry them, with and without a base path",
          arguments: BackendConfiguration.allCases)
    func paths(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let other = try Self.otherServer.get()
        let port = server.port
        let elsewhere: [(path: String, host: String)] = [
            ("http://localhost:\(port)/echo", "localhost:\(port)"),                 // an absolute URL: another host name
            ("//127.0.0.1:\(other.port)/echo", "127.0.0.1:\(other.port)"),          // protocol-relative
            ("HTTP://LOCALHOST:\(port)/echo", "localhost:\(port)"),                 // upper case
            ("http://127.0.0.1:\(other.port)/echo", "127.0.0.1:\(other.port)"),     // another port
            ("https://127.0.0.1:\(server.tlsPort)/echo", "127.0.0.1:\(server.tlsPort)"),  // another scheme
        ]
        let home = ["/echo", "http://127.0.0.1:\(port)/echo", "HTTP://127.0.0.1:\(port)/echo", "//127.0.0.1:\(port)/echo"]
        for base in [server.baseURL, server.url(path: "/api/v1/")] {
            for authorization in Authorization.allCases {
                try await withManager(backend, baseURL: base, cookies: .inMemory) { api in
                    try await Self.arm(api, with: authorization)
                    for (path, host) in elsewhere {
                        let echo = try await api.get(path, as: Echo.self)
                        #expect(Self.host(echo) == host, "\(path) went to \(Self.host(echo))")
                        Self.expect(echo, carried: false, authorization, "\(path) from base \(base)")
                    }
                    for path in home {
                        let echo = try await api.get(path, as: Echo.self)
                        #expect(Self.host(echo) == "127.0.0.1:\(port)")
                        Self.expect(echo, carried: true, authorization, "\(path) from base \(base)")
                    }
                }
            }
        }
    }

    @Test("a redirect from the base URL's origin to another one drops the marked header, the Authorization and the cookies",
          arguments: BackendConfiguration.allCases)
    func redirects(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let other = try Self.otherServer.get()
        for authorization in Authorization.allCases {
            try await withManager(backend, cookies: .inMemory) { api in
                try await Self.arm(api, with: authorization)
                let home = try await api.get(Route.redirectTo(url: server.url(.echo).absoluteString).path, as: Echo.self)
                Self.expect(home, carried: true, authorization, "a redirect home")
                for target in [other.url(.echo), server.url(.echo, tls: true), server.otherOriginURL(.echo)] {
                    let echo = try await api.get(Route.redirectTo(url: target.absoluteString).path, as: Echo.self)
                    #expect(Self.host(echo) == "\(target.host ?? ""):\(target.port ?? 0)", "the redirect did not reach \(target)")
                    Self.expect(echo, carried: false, authorization, "a redirect to \(target)")
                }
            }
        }
    }

    @Test("the wire trace shows a marked header as <redacted>", arguments: BackendConfiguration.allCases)
    func wireTrace(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            try api.requestSerializer.setValue("k3y-never-logged", forSecretHeader: "X-API-Key")
            let handler = InMemoryLogHandler()
            var logger = Logger(label: "curlew.tests", factory: { _ in handler })
            logger.logLevel = .trace
            api.logger = logger
            #expect(try await api.get("echo", as: Echo.self).headerValues("X-API-Key") == ["k3y-never-logged"])
            let wire = handler.entries.filter { $0.level == .trace }.map { "\($0.message)" }
            #expect(wire.contains { $0.contains("X-API-Key: <redacted>") }, "\(wire)")
            #expect(!wire.contains { $0.contains("k3y-never-logged") }, "\(wire)")
        }
    }

    @Test("requests built by hand and handed to the manager follow the same rule",
          arguments: BackendConfiguration.allCases)
    func builtRequests(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let other = try Self.otherServer.get()
        for authorization in Authorization.allCases {
            try await withManager(backend, cookies: .inMemory) { api in
                try await Self.arm(api, with: authorization)
                for (url, carried) in [(server.url(.echo), true), (other.url(.echo), false)] {
                    // The serializer's own request carries its headers; the manager decides what is sent.
                    let request = try api.requestSerializer.request(method: .get, url: url)
                    Self.expect(try await api.value(for: request, as: Echo.self), carried: carried, authorization, "value(for:) \(url)")
                    let operation = api.operation(with: request, success: nil, failure: nil)
                    operation.responseSerializer = DataResponseSerializer()
                    api.operationQueue.addOperation(operation)
                    let body = try await operation.responseValue(as: Data?.self) ?? Data()
                    Self.expect(try JSONDecoder().decode(Echo.self, from: body), carried: carried, authorization, "operation(with:) \(url)")
                }
            }
        }
    }
}
