import Curlew
import CurlewTesting
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// Public-key pinning, credentials (Basic and Digest, never across origins) and cookies, on every
/// backend.
@Suite("RequestOperationManager: security, credentials, cookies")
struct SecurityTests {
    /// Trusts the test CA, with `pins`.
    static func policy(pinning pins: [String]) -> SecurityPolicy {
        var policy = SecurityPolicy.pinning(pins.compactMap { PublicKeyPin(base64SHA256: $0) })
        policy.trustedRootsFile = TestServer.caCertificatePath
        return policy
    }

    @Test("the server's pin succeeds; another key's fails with a typed secure-connection error",
          arguments: BackendConfiguration.allCases)
    func pinning(_ backend: BackendConfiguration) async throws {
        try await withManager(backend, baseURL: try testServer().tlsBaseURL) { api in
            api.securityPolicy = Self.policy(pinning: [TestServer.caPublicKeyPin, TestServer.serverPublicKeyPin])
            let echo = try await api.get("echo", as: Echo.self)
            #expect(echo.method == "GET")

            api.securityPolicy = Self.policy(pinning: [TestServer.caPublicKeyPin])
            do {
                _ = try await api.get("echo", as: Echo.self)
                Issue.record("a wrong pin was accepted")
            } catch let error as TransferError {
                #expect(error.code == .secureConnectionFailed, "\(error)")
                #expect(error.curlCode == 90, "CURLE_SSL_PINNEDPUBKEYNOTMATCH: \(error)")
            }
        }
    }

    @Test("a client certificate is loaded for the handshake; one that cannot be read fails it, typed",
          arguments: BackendConfiguration.allCases)
    func clientCertificate(_ backend: BackendConfiguration) async throws {
        let certificates = URL(fileURLWithPath: TestServer.caCertificatePath).deletingLastPathComponent()
        try await withManager(backend, baseURL: try testServer().tlsBaseURL) { api in
            // The test server asks for no client certificate; curl still loads the identity it is given.
            var policy = Self.policy(pinning: [])
            policy.clientCertificate = ClientCertificate(
                certificateFile: certificates.appendingPathComponent("server.pem").path,
                privateKeyFile: certificates.appendingPathComponent("server.key").path)
            api.securityPolicy = policy
            #expect(try await api.get("echo", as: Echo.self).method == "GET")

            policy.clientCertificate = ClientCertificate(certificateFile: certificates.appendingPathComponent("missing.pem").path)
            api.securityPolicy = policy
            do {
                _ = try await api.get("echo", as: Echo.self)
                Issue.record("a missing client certificate was accepted")
            } catch let error as TransferError {
                #expect(error.code == .secureConnectionFailed, "\(error)")
                #expect(error.curlCode == 58, "CURLE_SSL_CERTPROBLEM: \(error)")
            }
        }
    }

    @Test("mutual TLS: a server that requires a client certificate gets it; none, or an untrusted one, fails typed",
          arguments: BackendConfiguration.allCases)
    func mutualTLS(_ backend: BackendConfiguration) async throws {
        try await withManager(backend, baseURL: try testServer().mutualTLSBaseURL) { api in
            var policy = Self.policy(pinning: [])
            policy.clientCertificate = ClientCertificate(
                certificateFile: TestServer.clientCertificatePath, privateKeyFile: TestServer.clientKeyPath)
            api.securityPolicy = policy
            #expect(try await api.get("echo", as: Echo.self).method == "GET")

            // Without the identity: the connection that presented it (kept by curl) must not serve this
            // request, and a new handshake fails. A TLS 1.3 server refuses after the handshake and
            // closes: curl reads its alert (`secureConnectionFailed`) or, when its request meets the
            // closed socket first, fails on the socket (`networkConnectionLost`; see the fault matrix).
            for identity in [nil, ClientCertificate(certificateFile: TestServer.untrustedClientCertificatePath,
                                                    privateKeyFile: TestServer.untrustedClientKeyPath)] {
                policy.clientCertificate = identity
                api.securityPolicy = policy
                do {
                    _ = try await api.get("echo", as: Echo.self)
                    Issue.record("the server accepted \(identity.map(String.init(describing:)) ?? "no client certificate")")
                } catch let error as TransferError {
                    #expect([.secureConnectionFailed, .networkConnectionLost].contains(error.code), "\(error)")
                }
            }

            // And the identity still works afterwards.
            policy.clientCertificate = ClientCertificate(
                certificateFile: TestServer.clientCertificatePath, privateKeyFile: TestServer.clientKeyPath)
            api.securityPolicy = policy
            #expect(try await api.get("echo", as: Echo.self).method == "GET")
        }
    }

    @Test("a pin is 32 bytes of Base64")
    func pinParsing() {
        #expect(PublicKeyPin(base64SHA256: TestServer.serverPublicKeyPin)?.description == "sha256//" + TestServer.serverPublicKeyPin)
        #expect(PublicKeyPin(base64SHA256: "not base64") == nil)
        #expect(PublicKeyPin(base64SHA256: Data(repeating: 1, count: 31).base64EncodedString()) == nil)
        #expect(PublicKeyPin(sha256: [UInt8](repeating: 7, count: 32)) != nil)
    }

    @Test("Basic and Digest credentials are answered by curl; a wrong password ends with the 401",
          arguments: BackendConfiguration.allCases)
    func authentication(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            api.credentials = TransferCredentials(user: "ada", password: "s3cret")
            #expect(try await api.get("basic-auth/ada/s3cret", as: Authenticated.self) == Authenticated(authenticated: true, user: "ada"))

            api.credentials = TransferCredentials(user: "ada", password: "s3cret", schemes: .digest)
            #expect(try await api.get("digest-auth/ada/s3cret", as: Authenticated.self).authenticated)
            api.credentials = TransferCredentials(user: "ada", password: "s3cret", schemes: .any)
            #expect(try await api.get("digest-auth/ada/s3cret", as: Authenticated.self).authenticated)
            // A POST's body is sent again after the challenge.
            #expect(try await api.post("digest-auth/ada/s3cret", parameters: ["a": "b"], as: Authenticated.self).authenticated)

            for (scheme, path) in [(TransferCredentials.Schemes.basic, "basic-auth"), (.digest, "digest-auth")] {
                api.credentials = TransferCredentials(user: "ada", password: "wrong", schemes: scheme)
                do {
                    _ = try await api.get("\(path)/ada/s3cret", as: Authenticated.self)
                    Issue.record("\(path) accepted a wrong password")
                } catch let error as ResponseSerializationError {
                    #expect(error.refusedStatus == 401)
                    #expect(error.response.headerFields[.wwwAuthenticate] != nil)
                }
            }
            api.credentials = nil
            let (_, response) = try await Self.status(of: api, "basic-auth/ada/s3cret")
            #expect(response == 401)
        }
    }

    /// The status of a GET, whatever it is.
    static func status(of api: RequestOperationManager, _ path: String) async throws -> (Data, Int) {
        let request = try api.request(.get, path)
        let operation = api.operation(with: request, success: nil, failure: nil)
        operation.responseSerializer = DataResponseSerializer()
        api.operationQueue.addOperation(operation)
        let data = try await operation.responseValue(as: Data?.self) ?? Data()
        return (data, operation.response?.head.status.code ?? 0)
    }

    @Test("credentials, curl's and the bearer header, go along same-origin redirects and never to another origin",
          arguments: BackendConfiguration.allCases)
    func credentialsAcrossOrigins(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend) { api in
            var serializer = HTTPRequestSerializer()
            try serializer.setBearerToken("t0ken")
            let bearer = serializer
            let sameOrigin = server.url(.echo).absoluteString
            let otherOrigin = server.otherOriginURL(.echo).absoluteString

            // curl's Basic credentials, sent up front.
            api.credentials = TransferCredentials(user: "ada", password: "s3cret", schemes: .basic)
            let same = try await api.get(Route.redirectTo(url: sameOrigin).path, as: Echo.self)
            #expect(same.headerValues("Authorization") == ["Basic " + Data("ada:s3cret".utf8).base64EncodedString()])
            let other = try await api.get(Route.redirectTo(url: otherOrigin).path, as: Echo.self)
            #expect(other.headerValues("Authorization").isEmpty)
            #expect(other.headerValues("Host").first?.hasPrefix("localhost:") == true, "the redirect reached the other origin")

            // A bearer token (a header of the request serializer's).
            api.credentials = nil
            api.requestSerializer = bearer
            #expect(try await api.get(Route.redirectTo(url: sameOrigin).path, as: Echo.self).headerValues("Authorization") == ["Bearer t0ken"])
            #expect(try await api.get(Route.redirectTo(url: otherOrigin).path, as: Echo.self).headerValues("Authorization").isEmpty)
            // A request that starts at the other origin is sent without the header, there and back here.
            let fromOther = server.otherOriginURL(.redirectTo(url: sameOrigin)).absoluteString
            let arrived = try await api.get(fromOther, as: Echo.self)
            #expect(arrived.headerValues("Host").first?.hasPrefix("127.0.0.1:") == true)
            #expect(arrived.headerValues("Authorization").isEmpty)
        }
    }

    @Test("cookies: a jar of the manager's own by default, none when off; sent by the next request to the host and never to another host",
          arguments: BackendConfiguration.allCases)
    func cookies(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let byDefault = RequestOperationManager(baseURL: server.baseURL, transport: StubTransport())
        #expect(byDefault.cookieJar != nil, "a manager keeps cookies unless told not to")
        try await withManager(backend, cookies: .off) { api in
            #expect(api.cookieJar == nil)
            _ = try await api.get(Route.setCookie(name: "session", value: "abc").path, as: Echo.self)
            #expect(try await api.get("echo", as: Echo.self).headerValues("Cookie").isEmpty)
        }
        try await withManager(backend, cookies: .inMemory) { api in
            let jar = try #require(api.cookieJar)
            let first = try await api.get(Route.setCookie(name: "session", value: "abc").path, as: Echo.self)
            #expect(first.headerValues("Cookie").isEmpty)
            #expect(try await api.get("echo", as: Echo.self).headerValues("Cookie") == ["session=abc"])
            _ = try await api.get(Route.setCookie(name: "theme", value: "dark").path, as: Echo.self)
            let both = try await api.get("echo", as: Echo.self).headerValues("Cookie").first ?? ""
            #expect(Set(both.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }) == ["session=abc", "theme=dark"])

            // Another host: 127.0.0.1's cookies stay home.
            #expect(try await api.get(server.otherOriginURL(.echo).absoluteString, as: Echo.self).headerValues("Cookie").isEmpty)

            #expect(Set(jar.cookies.map(\.name)) == ["session", "theme"])
            #expect(jar.cookies.allSatisfy { $0.domain == "127.0.0.1" && $0.path == "/" })
            #expect(jar.cookies(for: server.url(.echo)).count == 2)
            #expect(jar.cookies(for: server.otherOriginURL(.echo)).isEmpty)
            jar.removeAll()
            #expect(jar.cookies.isEmpty)
            #expect(try await api.get("echo", as: Echo.self).headerValues("Cookie").isEmpty)
        }
    }
}

/// What `/basic-auth` and `/digest-auth` answer.
struct Authenticated: Codable, Sendable, Hashable {
    var authenticated: Bool
    var user: String
}

/// The jar's share handle on pooled easy handles.
@Suite("Cookie jar on the engine")
struct CookieJarEngineTests {
    @Test("a pooled handle leaves the jar it used: the next transfer without a jar sends no cookie",
          arguments: BackendConfiguration.allCases)
    func pooledHandleLeavesTheJar(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let engine = TransferEngine(scheduler: backend.makeIsolatedScheduler())
        let jar = CookieJar()
        var withJar = TransferRequest(url: server.url(.setCookie(name: "pooled", value: "1")))
        withJar.options.cookieJar = jar
        _ = try await engine.execute(withJar)
        withJar = TransferRequest(url: server.url(.echo))
        withJar.options.cookieJar = jar
        let sent = try JSONDecoder().decode(Echo.self, from: try await engine.execute(withJar).body ?? Data())
        #expect(sent.headerValues("Cookie") == ["pooled=1"])
        #expect(await engine.diagnostics().idleEasyHandles >= 1)

        let without = try await engine.execute(TransferRequest(url: server.url(.echo)))
        let echo = try JSONDecoder().decode(Echo.self, from: without.body ?? Data())
        #expect(echo.headerValues("Cookie").isEmpty)
        #expect(jar.cookies.map(\.name) == ["pooled"])
        await engine.shutdown()
    }
}
