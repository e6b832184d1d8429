import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

@Suite("Streaming (smoke)")
struct StreamingSmokeTests {
    @Test("a 4 MiB body streamed through a 64 KiB buffer arrives whole", arguments: BackendConfiguration.allCases)
    func streamsWhole(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let response = try await engine.stream(try .get(.bytes(4 << 20)), bufferSize: 64 << 10)
            #expect(response.head.status.code == 200)
            var received = Data()
            for try await chunk in response.body { received.append(chunk) }
            #expect(received == Data(TestServer.expectedBody(count: 4 << 20)))
        }
    }

    @Test("a body streamed up from an AsyncSequence, chunked", arguments: BackendConfiguration.allCases)
    func uploadsStream(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let pieces = AsyncStream<Data> { continuation in
                for index in 0..<100 { continuation.yield(Data(repeating: UInt8(index), count: 10_000)) }
                continuation.finish()
            }
            var request = try TransferRequest.get(.echo)
            request.head.method = .post
            request.body = .stream(RequestBodyStream(pieces))
            let response = try await engine.fetch(request)
            let echo = try JSONDecoder().decode(EchoReply.self, from: try #require(response.body))
            #expect(echo.bodyLength == 1_000_000)
            #expect(echo.headerValues("Transfer-Encoding") == ["chunked"])
        }
    }

    @Test("stopping early cancels the transfer", arguments: BackendConfiguration.allCases)
    func stopsEarly(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let response = try await engine.stream(try .get(.bytes(64 << 20)), bufferSize: 64 << 10)
            var count = 0
            for try await chunk in response.body {
                count += chunk.count
                if count > 1 << 20 { break }
            }
        }
    }
}
