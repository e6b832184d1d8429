import Foundation
import HTTPTypes
import Testing
@testable import CurlewTransport

/// The route a transfer's connections take, as values: curl's connect-to lines, proxy URLs and
/// their credentials, Unix socket names, and how each changes the handle setup.
@Suite("Connection route")
struct ConnectionRouteTests {
    private func setup(_ change: (inout TransferOptions) -> Void = { _ in }) throws -> HandleSetup {
        var options = TransferOptions()
        change(&options)
        let attempt = Attempt(target: try RequestTarget(validating: "http://a.test/x"), method: .get, headerFields: [:],
                              sendsBody: false, redirectCount: 0, resume: nil)
        return HandleSetup(options: options, attempt: attempt, sendsBody: false)
    }

    @Test("every route option changes the setup")
    func routeOptionsMatter() throws {
        let base = try self.setup()
        let changed: [HandleSetup] = [
            try self.setup { $0.proxy = .url("http://proxy.test:3128") },
            try self.setup { $0.proxy = .server(ProxyServer(url: "http://proxy.test:3128", bypass: ["a.test"])) },
            try self.setup { $0.proxy = .server(ProxyServer(url: "https://proxy.test", tls: ProxyTLSOptions(verification: .none))) },
            try self.setup { $0.unixSocket = .path("/run/a.sock") },
            try self.setup { $0.unixSocket = .abstract("a") },
            try self.setup { $0.dnsOverride = ["a.test": "127.0.0.1"] },
            try self.setup { $0.connectTo = [ConnectTo(host: "a.test", connectPort: 8080)] },
            try self.setup { $0.ipVersion = .ipv4Only },
            try self.setup { $0.happyEyeballsDelay = .milliseconds(50) },
            try self.setup { $0.hstsFile = "/tmp/hsts" },
            try self.setup { $0.altSvcFile = "/tmp/alt-svc" },
        ]
        for (index, setup) in changed.enumerated() {
            #expect(setup != base, "change \(index) left the setup equal")
        }
        #expect(try self.setup { $0.unixSocket = .path("/run/a.sock") } != self.setup { $0.unixSocket = .path("/run/b.sock") })
        #expect(try self.setup { $0.unixSocket = .path("a") } != self.setup { $0.unixSocket = .abstract("a") })
    }

    @Test("proxy credentials and cache files keep a handle out of the pool; other route options do not")
    func reusability() throws {
        let secret = TransferCredentials(user: "ada", password: "s3cret")
        #expect(try !self.setup { $0.proxy = .server(ProxyServer(url: "http://proxy.test:3128", credentials: secret)) }.isReusable)
        #expect(try !self.setup { $0.proxy = .url("http://ada:s3cret@proxy.test:3128") }.isReusable)
        #expect(try !self.setup { $0.proxy = .server(ProxyServer(url: "socks5h://ada:s3cret@proxy.test")) }.isReusable)
        #expect(try !self.setup { $0.hstsFile = "/tmp/hsts" }.isReusable)
        #expect(try !self.setup { $0.altSvcFile = "/tmp/alt-svc" }.isReusable)
        #expect(try self.setup { $0.proxy = .url("http://proxy.test:3128") }.isReusable)
        #expect(try self.setup { $0.unixSocket = .path("/run/a.sock") }.isReusable)
        #expect(try self.setup { $0.dnsOverride = ["a.test": "127.0.0.1"] }.isReusable)
    }

    @Test("the setup holds the proxy without its credentials")
    func setupHoldsNoSecret() throws {
        let setup = try self.setup { $0.proxy = .url("http://ada:s3cret@proxy.test:3128") }
        #expect(setup.route.proxy == .url("http://proxy.test:3128"))
        let server = try self.setup {
            $0.proxy = .server(ProxyServer(url: "http://proxy.test:3128", credentials: TransferCredentials(user: "ada", password: "s3cret")))
        }
        #expect(server.route.proxy == .server(ProxyServer(url: "http://proxy.test:3128")))
        #expect(!"\(server)".contains("s3cret"))
    }

    @Test("credentials come out of a proxy URL, percent-decoded; the URL keeps the rest")
    func proxyURLCredentials() {
        let (url, credentials) = ProxyURL.splitCredentials("socks5h://ada:p%40ss%3Aw@proxy.test:1080")
        #expect(url == "socks5h://proxy.test:1080")
        #expect(credentials == TransferCredentials(user: "ada", password: "p@ss:w"))
        #expect(ProxyURL.splitCredentials("http://proxy.test:3128").credentials == nil)
        #expect(ProxyURL.redacting("http://ada:s3cret@proxy.test:3128") == "http://ada:<redacted>@proxy.test:3128")
        #expect(ProxyServer(parsing: "http://ada:s3cret@proxy.test:3128") ==
                ProxyServer(url: "http://proxy.test:3128", credentials: TransferCredentials(user: "ada", password: "s3cret")))
        let described = "\(ProxyServer(url: "http://proxy.test", credentials: TransferCredentials(user: "ada", password: "s3cret")))"
        #expect(described.contains("ada") && !described.contains("s3cret"))
    }

    @Test("proxy URLs and bypass lists are checked", arguments: [
        ("ftp://proxy.test", TransferError.Code.unsupportedURL),
        ("http://proxy .test", .invalidRequest),
        ("", .invalidRequest),
    ])
    func proxyValidation(_ url: String, _ code: TransferError.Code) {
        #expect(throws: TransferError.self) { try ProxyURL.validate(url) }
        do { try ProxyURL.validate(url) } catch { #expect(error.code == code) }
    }

    @Test("every scheme curl speaks to a proxy is accepted, and a bare host:port")
    func proxySchemes() throws {
        for url in ["http://p:1", "HTTPS://p:1", "socks4://p:1", "socks4a://p:1", "socks5://p:1", "socks5h://p:1", "p:3128"] {
            try ProxyURL.validate(url)
        }
        try ProxyURL.validate(bypass: ["localhost", ".internal", "10.0.0.0/8", "*", "::1"])
        #expect(throws: TransferError.self) { try ProxyURL.validate(bypass: ["a.test,b.test"]) }
        #expect(throws: TransferError.self) { try ProxyURL.validate(bypass: [""]) }
    }

    @Test("connect-to rules and DNS overrides become curl's lines, rules first, overrides by name")
    func connectLines() throws {
        let rules = try ConnectRules(
            connectTo: [ConnectTo(host: "a.test", port: 443, connectHost: "b.test", connectPort: 8443),
                        ConnectTo(connectPort: 8080),
                        ConnectTo(host: "::1", connectHost: "127.0.0.1")],
            dnsOverride: ["z.test": "::1", "m.test": "10.1.2.3"])
        #expect(rules.lines == ["a.test:443:b.test:8443", ":::8080", "[::1]::127.0.0.1:",
                                "m.test::10.1.2.3:", "z.test::[::1]:"])
        #expect(try ConnectRules(connectTo: [], dnsOverride: ["a.test": "[2001:db8::1]"]).lines == ["a.test::[2001:db8::1]:"])
    }

    @Test("a connect-to rule or override that curl would misread is refused", arguments: [
        ([ConnectTo(host: "a.test:80")], [String: String]()),
        ([ConnectTo(host: "a test")], [:]),
        ([ConnectTo(connectHost: "b.test/x")], [:]),
        ([ConnectTo(port: 0)], [:]),
        ([ConnectTo(connectPort: 65536)], [:]),
        ([], ["a.test": "not-an-address"]),
        ([], ["a.test": "127.0.0.1:80"]),
        ([], ["": "127.0.0.1"]),
        ([], ["a.test\u{0}": "127.0.0.1"]),
    ])
    func badRules(_ connectTo: [ConnectTo], _ overrides: [String: String]) {
        #expect(throws: TransferError.self) { try ConnectRules(connectTo: connectTo, dnsOverride: overrides) }
    }

    @Test("Unix socket names are checked against sun_path's size")
    func unixSocketNames() throws {
        try UnixSocketAddress.path(String(repeating: "a", count: UnixSocketAddress.maximumLength)).validate()
        try UnixSocketAddress.abstract("curlew").validate()
        for bad: UnixSocketAddress in [.path(""), .path(String(repeating: "a", count: 108)), .abstract("a\u{0}b"), .abstract("")] {
            #expect(throws: TransferError.self) { try bad.validate() }
        }
        #expect(UnixSocketAddress.abstract("curlew").description == "@curlew")
    }
}
