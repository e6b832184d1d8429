import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// Where connections go: fixed addresses for names (``TransferOptions/dnsOverride``), connect-to
/// rules, the IP version, and the addresses the metrics report. `curlew-test.invalid` resolves
/// nowhere (RFC 6761), so a request for it that succeeds went where an override sent it.
@Suite("Address control")
struct AddressControlTests {
    private static func request(_ url: String, _ change: (inout TransferOptions) -> Void = { _ in }) throws -> TransferRequest {
        var options = TransferOptions()
        change(&options)
        return TransferRequest(url: try #require(URL(string: url)), options: options)
    }

    @Test("a DNS override connects a name to its address; Host keeps the name", arguments: BackendConfiguration.allCases)
    func dnsOverride(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let response = try await engine.fetch(try Self.request("http://curlew-test.invalid:\(server.port)/echo") {
                $0.dnsOverride = ["curlew-test.invalid": "127.0.0.1"]
            })
            #expect(try EchoReply(response).headerValues("Host") == ["curlew-test.invalid:\(server.port)"])
            #expect(response.metrics.remoteAddress == "127.0.0.1")
            #expect(response.metrics.remotePort == server.port)
            #expect(response.metrics.localAddress == "127.0.0.1")
            #expect((response.metrics.localPort ?? 0) > 0)
        }
    }

    @Test("one transfer's DNS override reaches no other transfer of the engine, nor its connection",
          arguments: BackendConfiguration.allCases)
    func overrideDoesNotLeak(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let url = "http://curlew-test.invalid:\(server.port)/bytes/5"
            let overridden = try await engine.fetch(try Self.request(url) { $0.dnsOverride = ["curlew-test.invalid": "127.0.0.1"] })
            #expect(overridden.head.status == .ok)
            // Its connection is in the engine's pool, its handle too: a request without the override
            // must still find no address for the name (curl's CURLOPT_RESOLVE would give it one).
            let plain = try await engine.failure(try Self.request(url))
            #expect(plain.code == .cannotFindHost)
            // Another transfer with the same override reuses the connection.
            let again = try await engine.fetch(try Self.request(url) { $0.dnsOverride = ["curlew-test.invalid": "127.0.0.1"] })
            #expect(again.metrics.isConnectionReused)
        }
    }

    @Test("over TLS the certificate is checked for the URL's name, not the address", arguments: BackendConfiguration.allCases)
    func overrideKeepsTheNameForTLS(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            // The test certificate names localhost and 127.0.0.1, not curlew-test.invalid.
            let named = try await engine.fetch(try Self.request("https://localhost:\(server.tlsPort)/bytes/3") {
                $0.tls.trustedRootsFile = TestServer.caCertificatePath
                $0.dnsOverride = ["localhost": "127.0.0.1"]
            })
            #expect(named.metrics.remoteAddress == "127.0.0.1")
            let unnamed = try await engine.failure(try Self.request("https://curlew-test.invalid:\(server.tlsPort)/bytes/3") {
                $0.tls.trustedRootsFile = TestServer.caCertificatePath
                $0.dnsOverride = ["curlew-test.invalid": "127.0.0.1"]
            })
            #expect(unnamed.code == .serverCertificateUntrusted || unnamed.code == .secureConnectionFailed)
        }
    }

    @Test("a connect-to rule sends one host and port elsewhere and leaves other hosts alone",
          arguments: BackendConfiguration.allCases)
    func connectTo(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let rule = ConnectTo(host: "curlew-test.invalid", port: 80, connectHost: "127.0.0.1", connectPort: server.port)
            let response = try await engine.fetch(try Self.request("http://curlew-test.invalid/echo") { $0.connectTo = [rule] })
            #expect(try EchoReply(response).headerValues("Host") == ["curlew-test.invalid"])
            #expect(response.metrics.remotePort == server.port)
            // The rule is for port 80 only.
            let otherPort = try await engine.failure(try Self.request("http://curlew-test.invalid:81/echo") { $0.connectTo = [rule] })
            #expect(otherPort.code == .cannotFindHost)
            // A redirect to another host is matched anew: not rewritten by the first host's rule.
            let redirect = server.url(.redirectTo(url: "http://other.invalid/echo"))
            let target = try await engine.failure(try Self.request(
                redirect.absoluteString.replacingOccurrences(of: "127.0.0.1:\(server.port)", with: "curlew-test.invalid")) {
                $0.connectTo = [rule]
            })
            #expect(target.code == .cannotFindHost)
            #expect(target.failingURL?.host == "other.invalid")
        }
    }

    @Test("IPv4 only reaches an IPv4 server; IPv6 only finds no address for it", arguments: BackendConfiguration.allCases)
    func ipVersion(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let v4 = try await engine.fetch(try Self.request("http://localhost:\(server.port)/bytes/1") { $0.ipVersion = .ipv4Only })
            #expect(v4.metrics.remoteAddress == "127.0.0.1")
            let v6 = try await engine.failure(try Self.request("http://127.0.0.1:\(server.port)/bytes/1") { $0.ipVersion = .ipv6Only })
            #expect(v6.code == .cannotFindHost || v6.code == .cannotConnectToHost)
            let delayed = try await engine.fetch(try Self.request("http://localhost:\(server.port)/bytes/1") {
                $0.happyEyeballsDelay = .milliseconds(10)
            })
            #expect(delayed.metrics.remoteAddress == "127.0.0.1")
        }
    }

    @Test("bad overrides and rules fail the transfer with a typed error", arguments: BackendConfiguration.allCases)
    func badInput(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let address = try await engine.failure(try Self.request(server.url(.bytes(1)).absoluteString) {
                $0.dnsOverride = ["127.0.0.1": "localhost"]
            })
            #expect(address.code == .invalidRequest)
            let rule = try await engine.failure(try Self.request(server.url(.bytes(1)).absoluteString) {
                $0.connectTo = [ConnectTo(host: "a:b")]
            })
            #expect(rule.code == .invalidRequest)
            let delay = try await engine.failure(try Self.request(server.url(.bytes(1)).absoluteString) {
                $0.happyEyeballsDelay = .milliseconds(-1)
            })
            #expect(delay.code == .invalidRequest)
        }
    }
}
