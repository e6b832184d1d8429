import Curlew
import Foundation
import Testing

/// `curlDescription` of where a request goes: the proxy (its password a secret), Unix sockets,
/// connect-to rules and DNS overrides, the IP version, HSTS and Alt-Svc files.
@Suite("curlDescription: routes")
struct RouteDescriptionTests {
    private static func request(_ change: (inout TransferOptions) -> Void) throws -> TransferRequest {
        var options = TransferOptions()
        change(&options)
        return TransferRequest(url: try #require(URL(string: "http://api.test/x")), options: options)
    }

    @Test("a proxy's password is redacted wherever it was given, and shown only when asked for")
    func proxyCredentials() throws {
        let explicit = try Self.request {
            $0.proxy = .server(ProxyServer(url: "http://proxy.test:3128", credentials: TransferCredentials(user: "ada", password: "s3cret"),
                                           bypass: ["localhost", ".internal"],
                                           tls: ProxyTLSOptions(verification: .none, trustedRootsFile: "/tmp/proxy-ca.pem")))
        }
        let inURL = try Self.request { $0.proxy = .url("socks5h://ada:s3cret@proxy.test:1080") }
        for request in [explicit, inURL] {
            let description = request.curlDescription
            #expect(description.contains("--proxy-user 'ada:<redacted>'"))
            #expect(!description.contains("s3cret"))
            #expect(request.curlDescription(revealingSecrets: true).contains("--proxy-user 'ada:s3cret'"))
        }
        let description = explicit.curlDescription
        #expect(description.contains("--proxy 'http://proxy.test:3128'"))
        #expect(description.contains("--noproxy 'localhost,.internal'"))
        #expect(description.contains("--proxy-insecure") && description.contains("--proxy-cacert '/tmp/proxy-ca.pem'"))
        #expect(inURL.curlDescription.contains("--proxy 'socks5h://proxy.test:1080'"))
    }

    @Test("sockets, connect-to rules, overrides and the other route options become curl's flags")
    func routeFlags() throws {
        let description = try Self.request {
            $0.unixSocket = .path("/run/docker.sock")
            $0.connectTo = [ConnectTo(host: "api.test", port: 80, connectHost: "::1", connectPort: 8080)]
            $0.dnsOverride = ["api.test": "127.0.0.1"]
            $0.ipVersion = .ipv4Only
            $0.happyEyeballsDelay = .milliseconds(100)
            $0.hstsFile = "/tmp/hsts"
            $0.altSvcFile = "/tmp/alt-svc"
        }.curlDescription
        for flag in ["--unix-socket '/run/docker.sock'", "--connect-to 'api.test:80:[::1]:8080'", "--connect-to 'api.test::127.0.0.1:'",
                     "--ipv4", "--happy-eyeballs-timeout-ms 100", "--hsts '/tmp/hsts'", "--alt-svc '/tmp/alt-svc'"] {
            #expect(description.contains(flag), "missing \(flag) in \(description)")
        }
        #expect(try Self.request { $0.unixSocket = .abstract("curlew") }.curlDescription.contains("--abstract-unix-socket 'curlew'"))
    }
}
