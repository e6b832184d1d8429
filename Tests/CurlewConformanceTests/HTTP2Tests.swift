import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

@Suite("HTTP/2", .serialized)
struct HTTP2Tests {
    @Test("over TLS, many transfers multiplexed on one connection", arguments: BackendConfiguration.allCases)
    func multiplexedOverTLS(_ backend: BackendConfiguration) async throws {
        try #require(LibCurl.supportsHTTP2)
        try await withEngine(backend) { engine in
            let server = try testServer()
            // One transfer first, so the others find the connection and wait to multiplex on it.
            #expect(try await engine.fetch(try .get(.bytes(1), tls: true)).metrics.httpVersion == .http2)
            let recorders = (0..<32).map { _ in TransferRecorder(engine) }
            for recorder in recorders {
                engine.makeTransfer(try .get(.drip(bytes: 1000, chunks: 2, intervalMilliseconds: 50), tls: true),
                                    delegate: recorder).start()
            }
            #expect(await waitUntil(timeout: .seconds(60)) { recorders.allSatisfy { $0.completionCount == 1 } })
            let responses = try recorders.map { try #require($0.events.value.completions.first).get() }
            #expect(responses.allSatisfy { $0.metrics.httpVersion == .http2 })
            #expect(responses.allSatisfy { $0.body == Data(TestServer.expectedBody(count: 1000)) })
            #expect(responses.map(\.metrics.connectionsOpened).reduce(0, +) == 0, "a new connection was opened")
            _ = server
        }
    }

    @Test("with prior knowledge (h2c)", arguments: BackendConfiguration.allCases)
    func priorKnowledge(_ backend: BackendConfiguration) async throws {
        try #require(LibCurl.supportsHTTP2)
        try await withEngine(backend) { engine in
            var request = TransferRequest(url: try testServer().h2cURL(.bytes(5000)))
            request.options.httpVersion = .http2PriorKnowledge
            let first = try await engine.fetch(request)
            #expect(first.metrics.httpVersion == .http2)
            #expect(first.body == Data(TestServer.expectedBody(count: 5000)))
            // libcurl before 8.0 fails every later transfer on a reused h2c connection (curl #10634).
            guard LibCurl.supportsPriorKnowledgeReuse else { return }
            #expect(try await engine.fetch(request).metrics.connectionsOpened == 0)
        }
    }
}
