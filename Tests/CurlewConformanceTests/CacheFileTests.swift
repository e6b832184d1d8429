import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// HSTS (``TransferOptions/hstsFile``) and Alt-Svc (``TransferOptions/altSvcFile``): what a server
/// announces is kept in a file, and changes later requests that use the file — and only those.
@Suite("HSTS and Alt-Svc files")
struct CacheFileTests {
    private static func temporaryFile(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("curlew-\(name)-\(UUID().uuidString.prefix(8))").path
    }

    private static func request(_ url: String, _ change: (inout TransferOptions) -> Void) throws -> TransferRequest {
        var options = TransferOptions.trustingTestCA
        change(&options)
        return TransferRequest(url: try #require(URL(string: url)), options: options)
    }

    @Test("after Strict-Transport-Security over https, an http:// URL to the host goes out as https://",
          arguments: BackendConfiguration.allCases)
    func hstsUpgrades(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let file = Self.temporaryFile("hsts")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await withEngine(backend) { engine in
            // HSTS ignores IP addresses (RFC 6797): a name, which the test certificate covers.
            let host = "localhost:\(server.tlsPort)"
            func withHSTS(_ options: inout TransferOptions) {
                options.hstsFile = file
                options.dnsOverride = ["localhost": "127.0.0.1"]
            }
            // Plain http to the TLS port fails before the host has said anything.
            let before = try await engine.failure(try Self.request("http://\(host)/bytes/4", withHSTS))
            #expect(before.code != .cancelled)

            let route = Route.responseHeader(name: "Strict-Transport-Security", value: "max-age=3600")
            let announced = try await engine.fetch(try Self.request("https://\(host)\(route.path)", withHSTS))
            #expect(announced.head.headerFields[try #require(HTTPField.Name("Strict-Transport-Security"))] == "max-age=3600")
            #expect((try? String(contentsOfFile: file, encoding: .utf8))?.contains("localhost") == true)

            let upgraded = try await engine.fetch(try Self.request("http://\(host)/bytes/4", withHSTS))
            #expect(upgraded.body == Data(TestServer.expectedBody(count: 4)))
            #expect(upgraded.url.scheme == "https", "the response says where it came from")

            // A transfer that does not use the file is not upgraded, on the same engine and
            // whatever handle the upgraded ones left in the pool.
            let plain = try await engine.failure(try Self.request("http://\(host)/bytes/4") { $0.dnsOverride = ["localhost": "127.0.0.1"] })
            #expect(plain.code != .cancelled)
        }
    }

    @Test("an Alt-Svc announcement sends the next https request to the alternative, in its HTTP version",
          arguments: BackendConfiguration.allCases)
    func altSvc(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let file = Self.temporaryFile("alt-svc")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await withEngine(backend) { engine in
            // The TLS listener (HTTP/2) announces the HTTP/1.1-only listener as h1 for the same host.
            let alternative = try #require(server.http1TLSBaseURL.port)
            let route = Route.responseHeader(name: "Alt-Svc", value: "h1=\":\(alternative)\"; ma=3600")
            let announced = try await engine.fetch(try Self.request("https://127.0.0.1:\(server.tlsPort)\(route.path)") {
                $0.altSvcFile = file
            })
            #expect(announced.metrics.remotePort == server.tlsPort)
            #expect((try? String(contentsOfFile: file, encoding: .utf8))?.contains("\(alternative)") == true)

            let moved = try await engine.fetch(try Self.request("https://127.0.0.1:\(server.tlsPort)/bytes/6") { $0.altSvcFile = file })
            #expect(moved.body == Data(TestServer.expectedBody(count: 6)))
            #expect(moved.metrics.remotePort == alternative)
            #expect(moved.metrics.httpVersion == .http1_1)

            // Without the file: the URL's own port, in HTTP/2, whatever handles the engine pooled.
            for _ in 0..<2 {
                let own = try await engine.fetch(try Self.request("https://127.0.0.1:\(server.tlsPort)/bytes/6") { _ in })
                #expect(own.metrics.remotePort == server.tlsPort)
            }
        }
    }

    @Test("a transfer that got no response leaves the HSTS file as it was", arguments: BackendConfiguration.allCases)
    func unansweredTransferKeepsTheFile(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let file = Self.temporaryFile("hsts")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await withEngine(backend) { engine in
            let route = Route.responseHeader(name: "Strict-Transport-Security", value: "max-age=3600")
            _ = try await engine.fetch(try Self.request("https://localhost:\(server.tlsPort)\(route.path)") {
                $0.hstsFile = file
                $0.dnsOverride = ["localhost": "127.0.0.1"]
            })
            let saved = try String(contentsOfFile: file, encoding: .utf8)
            #expect(saved.contains("localhost"))
            // Refused at once: curl started the transfer and got nothing.
            _ = try await engine.failure(try Self.request(server.refusedURL.absoluteString) { $0.hstsFile = file })
            // Cancelled before curl started it.
            let recorder = TransferRecorder(engine)
            let transfer = engine.makeTransfer(try Self.request(server.url(.delay(60_000)).absoluteString) { $0.hstsFile = file },
                                               delegate: recorder)
            transfer.start()
            transfer.cancel()
            #expect(await recorder.result()?.failure?.code == .cancelled)
            #expect(try String(contentsOfFile: file, encoding: .utf8) == saved)
        }
    }
}
