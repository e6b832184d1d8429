import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// The defaults against hostile responses, and the request rules that keep both ways of setting a
/// request consistent: what reaches the server, and what a failure says.
@Suite("Safe defaults and consistency")
struct SafeDefaultsTests {
    @Test("bombs: the in-memory cap applies when the ratio is lifted; a file then has only the limit asked for",
          arguments: BackendConfiguration.allCases)
    func bombLimits(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            var lifted = TransferRequest(url: server.faultURL(.gzipBomb))
            lifted.options.decompressionLimit = .none
            lifted.options.maximumInMemoryBodySize = 8 << 20
            let inMemory = try await engine.failure(lifted)
            #expect(inMemory.code == .responseTooLarge)
            #expect(inMemory.message.contains("maximumInMemoryBodySize"), "\(inMemory)")

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-bomb-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            var toFile = TransferRequest(url: server.faultURL(.doubleGzipBomb), destination: .file(directory.appendingPathComponent("bomb")))
            toFile.options.decompressionLimit = .none
            toFile.options.maximumResponseBodySize = 16 << 20
            let file = try await engine.failure(toFile)
            #expect(file.code == .responseTooLarge)
            #expect(file.message.contains("maximumResponseBodySize"), "the ratio was lifted: \(file)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "a failed download left a file")
        }
    }

    @Test("a double-gzip bomb streamed to a file fails by the default ratio and leaves the destination as it was",
          arguments: BackendConfiguration.allCases)
    func bombToFile(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            for existing in [false, true] {
                try await DownloadFixture.withDestination(existing: existing) { directory, destination in
                    let request = TransferRequest(url: server.faultURL(.doubleGzipBomb), destination: .file(destination))
                    let error = try await engine.failure(request)
                    #expect(error.code == .responseTooLarge)
                    #expect(error.message.contains("decompressionLimit"), "\(error)")
                    try DownloadFixture.expectUntouched(directory, destination, existing: existing)
                }
            }
        }
    }

    @Test("credentials in the URL are sent as Basic, and not to another origin", arguments: BackendConfiguration.allCases)
    func credentialsInURL(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let url = try #require(URL(string: "http://curlew:s%3Acret@127.0.0.1:\(server.port)/echo"))
            let echo = try EchoReply(try await engine.fetch(TransferRequest(url: url)))
            let expected = "Basic " + Data("curlew:s:cret".utf8).base64EncodedString()
            #expect(echo.headers.contains { $0.first?.lowercased() == "authorization" && $0.last == expected }, "\(echo.headers)")

            let elsewhere = "http://localhost:\(server.port)/echo"
            let redirecting = try #require(URL(string: "http://curlew:secret@127.0.0.1:\(server.port)"
                + Route.redirectTo(url: elsewhere).path))
            let redirected = try EchoReply(try await engine.fetch(TransferRequest(url: redirecting)))
            #expect(!redirected.headers.contains { $0.first?.lowercased() == "authorization" }, "\(redirected.headers)")
        }
    }

    @Test("a header value set through HTTPFields reaches the server without CR or LF", arguments: BackendConfiguration.allCases)
    func legalizedHeaderValues(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            var request = try TransferRequest.get(.echo)
            let name = try #require(HTTPField.Name("X-Value"))
            request.head.headerFields[name] = "a\r\nX-Injected: 1"
            let echo = try EchoReply(try await engine.fetch(request))
            #expect(!echo.headers.contains { $0.first?.lowercased() == "x-injected" }, "a header was smuggled: \(echo.headers)")
            #expect(echo.headers.contains { $0.first?.lowercased() == "x-value" && $0.last == "a  X-Injected: 1" }, "\(echo.headers)")
        }
    }

    @Test("body-file and destination failures name the URL", arguments: BackendConfiguration.allCases)
    func failingURLForFiles(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let url = server.url(.upload)
            let missing = URL(fileURLWithPath: "/nonexistent/curlew-\(UUID().uuidString)")
            let body = try await engine.failure(TransferRequest(url: url, method: .put, body: .file(missing)))
            #expect(body.code == .cannotOpenFile)
            #expect(body.failingURL == url)
            let destination = try await engine.failure(TransferRequest(url: server.url(.bytes(10)), destination: .file(missing)))
            #expect(destination.code == .cannotWriteToFile)
            #expect(destination.failingURL == server.url(.bytes(10)))
        }
    }

    @Test("a port outside 1...65535 fails up front", arguments: BackendConfiguration.allCases)
    func badPorts(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try #require(URL(string: "http://127.0.0.1:70000/"))
            let error = try await engine.failure(TransferRequest(url: url))
            #expect(error.code == .badURL, "\(error)")
            #expect(error.curlCode == nil, "curl should never have seen it: \(error)")
        }
    }
}
