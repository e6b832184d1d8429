import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// Requests through real proxies: tinyproxy (HTTP, with and without Basic credentials), microsocks
/// (SOCKS5, with and without user/password) and the test server's TLS listener standing in for an
/// HTTPS proxy. Each test shows the request went through the proxy: the proxy's log, the `Via`
/// field tinyproxy adds, or a request target only a proxy is sent.
@Suite("Proxies")
struct ProxyTests {
    private static let secret = TransferCredentials(user: "ada", password: "pr0xy-s3cret")

    private static func request(_ url: URL, via proxy: ProxyServer, options: TransferOptions = TransferOptions()) -> TransferRequest {
        var request = TransferRequest(url: url, options: options)
        request.options.proxy = .server(proxy)
        return request
    }

    @Test("an http request goes through tinyproxy; a bypassed host goes direct",
          .enabled(if: ExternalServer.isUsable("tinyproxy"), ExternalServer.missing("tinyproxy")),
          arguments: BackendConfiguration.allCases)
    func httpProxy(_ backend: BackendConfiguration) async throws {
        let proxy = try ExternalServer.tinyproxy()
        defer { proxy.stop() }
        let server = try testServer()
        try await withEngine(backend) { engine in
            let url = server.url(.echo)
            let proxied = try EchoReply(try await engine.fetch(Self.request(url, via: ProxyServer(url: "http://127.0.0.1:\(proxy.port)"))))
            #expect(proxied.headerValues("Via").contains { $0.contains("tinyproxy") })
            #expect(proxy.file("tinyproxy.log").contains("GET \(url.absoluteString) HTTP/1.1"))

            let direct = try EchoReply(try await engine.fetch(
                Self.request(url, via: ProxyServer(url: "http://127.0.0.1:\(proxy.port)", bypass: ["127.0.0.1"]))))
            #expect(direct.headerValues("Via").isEmpty, "a bypassed host went through the proxy")
            let plain = try EchoReply(try await engine.fetch(TransferRequest(url: url, options: {
                var options = TransferOptions()
                options.proxy = .url("http://127.0.0.1:\(proxy.port)")
                return options
            }())))
            #expect(plain.headerValues("Via").contains { $0.contains("tinyproxy") }, ".url(_:) is a proxy too")
        }
    }

    @Test("an https request goes through tinyproxy in a CONNECT tunnel",
          .enabled(if: ExternalServer.isUsable("tinyproxy"), ExternalServer.missing("tinyproxy")),
          arguments: BackendConfiguration.allCases)
    func connectTunnel(_ backend: BackendConfiguration) async throws {
        let proxy = try ExternalServer.tinyproxy()
        defer { proxy.stop() }
        let server = try testServer()
        try await withEngine(backend) { engine in
            let response = try await engine.fetch(Self.request(server.url(.bytes(100), tls: true),
                                                               via: ProxyServer(url: "http://127.0.0.1:\(proxy.port)"),
                                                               options: TransferOptions.trustingTestCA))
            #expect(response.body == Data(TestServer.expectedBody(count: 100)))
            #expect(proxy.file("tinyproxy.log").contains("CONNECT 127.0.0.1:\(server.tlsPort) HTTP/1.1"))
            #expect(response.metrics.remotePort == proxy.port, "connected to the proxy")
        }
    }

    @Test("proxy credentials reach tinyproxy, and no log, trace or description shows the password",
          .enabled(if: ExternalServer.isUsable("tinyproxy"), ExternalServer.missing("tinyproxy")),
          arguments: BackendConfiguration.allCases)
    func httpProxyCredentials(_ backend: BackendConfiguration) async throws {
        let proxy = try ExternalServer.tinyproxy(credentials: Self.secret)
        defer { proxy.stop() }
        let server = try testServer()
        try await withEngine(backend) { engine in
            let url = server.url(.echo)
            let refused = try await engine.fetch(Self.request(url, via: ProxyServer(url: "http://127.0.0.1:\(proxy.port)")))
            #expect(refused.head.status.code == 407)

            let events = Locked<[WireTracer.Event]>([])
            var options = TransferOptions()
            options.wireTracer = WireTracer { _, event in events.withLock { $0.append(event) } }
            let admitted = try await engine.fetch(Self.request(
                url, via: ProxyServer(url: "http://127.0.0.1:\(proxy.port)", credentials: Self.secret), options: options))
            #expect(admitted.head.status == .ok)
            #expect(try EchoReply(admitted).headerValues("Via").contains { $0.contains("tinyproxy") })
            #expect(try EchoReply(admitted).headerValues("Proxy-Authorization").isEmpty, "the proxy's credentials reached the server")
            let trace = events.value.map(\.description).joined(separator: "\n")
            #expect(trace.contains("Proxy-Authorization: <redacted>"))
            #expect(!trace.contains(Self.secret.password) && !trace.contains("YWRhOnByMHh5LXMzY3JldA"))

            // Credentials in the URL are taken out of it and used the same way.
            let inURL = try await engine.fetch(Self.request(
                url, via: ProxyServer(url: "http://ada:pr0xy-s3cret@127.0.0.1:\(proxy.port)")))
            #expect(inURL.head.status == .ok)

            // Through the CONNECT tunnel too.
            let tunnelled = try await engine.fetch(Self.request(
                server.url(.bytes(10), tls: true), via: ProxyServer(url: "http://127.0.0.1:\(proxy.port)", credentials: Self.secret),
                options: TransferOptions.trustingTestCA))
            #expect(tunnelled.body == Data(TestServer.expectedBody(count: 10)))
        }
    }

    @Test("socks5h: the proxy resolves the name (its log names the host the client asked for)",
          .enabled(if: ExternalServer.isUsable("microsocks"), ExternalServer.missing("microsocks")),
          arguments: BackendConfiguration.allCases)
    func socks5RemoteResolution(_ backend: BackendConfiguration) async throws {
        let proxy = try ExternalServer.microsocks()
        defer { proxy.stop() }
        let server = try testServer()
        try await withEngine(backend) { engine in
            let url = try #require(URL(string: "http://localhost:\(server.port)\(Route.bytes(20).path)"))
            let response = try await engine.fetch(Self.request(url, via: ProxyServer(url: "socks5h://127.0.0.1:\(proxy.port)")))
            #expect(response.body == Data(TestServer.expectedBody(count: 20)))
            #expect(response.metrics.remotePort == proxy.port, "connected to the proxy")
            #expect(await waitUntil { proxy.output().contains("connected to localhost:\(server.port)") }, "\(proxy.output())")

            // socks5 (no h): the client resolves, and the proxy is given an address.
            _ = try await engine.fetch(Self.request(url, via: ProxyServer(url: "socks5://127.0.0.1:\(proxy.port)"), options: {
                var options = TransferOptions()
                options.ipVersion = .ipv4Only
                return options
            }()))
            #expect(await waitUntil { proxy.output().contains("connected to 127.0.0.1:\(server.port)") }, "\(proxy.output())")
        }
    }

    @Test("SOCKS5 user and password: refused without them, admitted with them",
          .enabled(if: ExternalServer.isUsable("microsocks"), ExternalServer.missing("microsocks")),
          arguments: BackendConfiguration.allCases)
    func socks5Credentials(_ backend: BackendConfiguration) async throws {
        let proxy = try ExternalServer.microsocks(credentials: Self.secret)
        defer { proxy.stop() }
        let server = try testServer()
        try await withEngine(backend) { engine in
            let url = server.url(.bytes(30))
            let refused = try await engine.failure(Self.request(url, via: ProxyServer(url: "socks5h://127.0.0.1:\(proxy.port)")))
            #expect(refused.code == .cannotConnectToHost)
            let wrong = TransferCredentials(user: Self.secret.user, password: "wrong")
            let alsoRefused = try await engine.failure(Self.request(
                url, via: ProxyServer(url: "socks5h://127.0.0.1:\(proxy.port)", credentials: wrong)))
            #expect(alsoRefused.code == .cannotConnectToHost)
            let admitted = try await engine.fetch(Self.request(
                url, via: ProxyServer(url: "socks5h://127.0.0.1:\(proxy.port)", credentials: Self.secret)))
            #expect(admitted.body == Data(TestServer.expectedBody(count: 30)))
        }
    }

    @Test("an https proxy: its certificate is verified against the proxy's own roots",
          arguments: BackendConfiguration.allCases)
    func httpsProxy(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            // The test server's TLS listener as the proxy: a plain http request goes to it in
            // absolute form, which only a proxy is sent, for a name no resolver knows.
            let tag = UUID().uuidString
            let url = try #require(URL(string: "http://curlew-test.invalid\(Route.echo.path)"))
            let proxyURL = "https://127.0.0.1:\(server.tlsPort)"

            let untrusted = try await engine.failure(Self.request(url, via: ProxyServer(url: proxyURL)).tagged(tag))
            #expect(untrusted.code == .serverCertificateUntrusted || untrusted.code == .secureConnectionFailed)
            #expect(server.requests(tagged: tag).isEmpty)

            let trusted = ProxyServer(url: proxyURL, tls: ProxyTLSOptions(trustedRootsFile: TestServer.caCertificatePath))
            let response = try await engine.fetch(Self.request(url, via: trusted).tagged(tag))
            #expect(response.head.status == .ok)
            #expect(server.requests(tagged: tag).map(\.target) == [url.absoluteString])

            let unchecked = ProxyServer(url: proxyURL, tls: ProxyTLSOptions(verification: .none))
            #expect(try await engine.fetch(Self.request(url, via: unchecked).tagged(tag)).head.status == .ok)
        }
    }
}
