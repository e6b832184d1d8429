import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// Requests over Unix domain sockets (``TransferOptions/unixSocket``), against nginx listening on
/// two sockets and on TCP. nginx answers with the listener's name, its number for the connection
/// and how many requests the connection carried, so a test sees where each request went and
/// which connection it used.
@Suite("Unix domain sockets", .enabled(if: ExternalServer.isUsable("nginx"), ExternalServer.missing("nginx")))
struct UnixSocketTests {
    /// nginx's one-line answer.
    private struct Answer: Equatable {
        var listener: String
        var connection: Int
        var requests: Int
        var host: String

        init(_ response: TransferResponse) throws {
            let text = String(decoding: try #require(response.body), as: UTF8.self)
            let fields = text.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            try #require(fields.count == 4, "unexpected answer \(text)")
            func value(_ field: String) -> String { String(field.split(separator: "=", maxSplits: 1).last ?? "") }
            self.listener = fields[0]
            self.connection = try #require(Int(value(fields[1])))
            self.requests = try #require(Int(value(fields[2])))
            self.host = value(fields[3])
        }
    }

    private static func request(_ url: String, socket: UnixSocketAddress?) throws -> TransferRequest {
        var request = TransferRequest(url: try #require(URL(string: url)))
        request.options.unixSocket = socket
        return request
    }

    @Test("a request goes to the socket, with the URL's host as Host", arguments: BackendConfiguration.allCases)
    func reachesTheSocket(_ backend: BackendConfiguration) async throws {
        let nginx = try ExternalServer.nginx(sockets: ["a"])
        defer { nginx.stop() }
        try await withEngine(backend) { engine in
            let response = try await engine.fetch(try Self.request("http://docker/v1.43/info", socket: .path(nginx.socketPath("a"))))
            #expect(response.head.status == .ok)
            let answer = try Answer(response)
            #expect(answer.listener == "a")
            #expect(answer.host == "docker")
            #expect(response.metrics.remoteAddress == nil && response.metrics.remotePort == nil)
        }
    }

    @Test("connections are pooled per socket: two sockets never share one, nor does TCP",
          arguments: BackendConfiguration.allCases)
    func poolsPerSocket(_ backend: BackendConfiguration) async throws {
        let nginx = try ExternalServer.nginx(sockets: ["a", "b"])
        defer { nginx.stop() }
        try await withEngine(backend) { engine in
            // One URL, three ways to reach it: the pool must tell them apart.
            let url = "http://localhost:\(nginx.port)/"
            let first = try Answer(try await engine.fetch(try Self.request(url, socket: .path(nginx.socketPath("a")))))
            let other = try Answer(try await engine.fetch(try Self.request(url, socket: .path(nginx.socketPath("b")))))
            let tcp = try Answer(try await engine.fetch(try Self.request(url, socket: nil)))
            let again = try await engine.fetch(try Self.request(url, socket: .path(nginx.socketPath("a"))))
            #expect(first.listener == "a" && first.requests == 1)
            #expect(other.listener == "b" && other.requests == 1, "socket b got a's connection")
            #expect(tcp.listener == "tcp" && tcp.requests == 1, "TCP got a socket's connection")
            let reused = try Answer(again)
            #expect(reused.listener == "a")
            #expect(reused.connection == first.connection && reused.requests == 2, "a's connection was not kept for a")
            #expect(again.metrics.isConnectionReused)
        }
    }

    @Test("a socket that does not exist fails the transfer as a connect failure; a bad name is refused",
          arguments: BackendConfiguration.allCases)
    func failures(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let missing = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-no-such-\(UUID().uuidString.prefix(8)).sock").path
            let error = try await engine.failure(try Self.request("http://localhost/", socket: .path(missing)))
            #expect(error.code == .cannotConnectToHost)
            let long = try await engine.failure(try Self.request("http://localhost/", socket: .path("/" + String(repeating: "s", count: 200))))
            #expect(long.code == .invalidRequest)
        }
    }

    @Test("an abstract socket is reached by its name", arguments: BackendConfiguration.allCases)
    func abstractSocket(_ backend: BackendConfiguration) async throws {
        let name = "curlew-test-\(UUID().uuidString.prefix(8))"
        let listener = try AbstractSocketResponder(name: name, body: "abstract\n")
        defer { listener.close() }
        try await withEngine(backend) { engine in
            let response = try await engine.fetch(try Self.request("http://localhost/", socket: .abstract(name)))
            #expect(response.body == Data("abstract\n".utf8))
            #expect(listener.requestHeads.first?.hasPrefix("GET / HTTP/1.1") == true)
        }
    }
}
