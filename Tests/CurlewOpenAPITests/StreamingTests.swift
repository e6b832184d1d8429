import Curlew
import CurlewOpenAPI
import CurlewTestServer
import CurlewTestSupport
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// Bodies streamed both ways through the generated client, on every backend: a binary response read
/// chunk by chunk, a producer's body of unknown length, a large body of known length, a multipart form.
@Suite("OpenAPI transport: streamed bodies")
struct StreamingTests {
    @Test("a binary response streams in chunks, with its length", arguments: BackendConfiguration.allCases)
    func download(_ backend: BackendConfiguration) async throws {
        let count = 4 << 20
        try await withClient(backend) { client, _ in
            let body = try await client.getBytes(path: .init(count: Int64(count))).ok.body.binary
            #expect(body.length == .known(Int64(count)))
            var check = PatternCheck()
            var chunks = 0
            for try await chunk in body {
                check.check(chunk)
                chunks += 1
            }
            #expect(check.count == Int64(count))
            #expect(check.matches)
            #expect(chunks > 1, "the body arrived in one piece: buffered, not streamed")
        }
    }

    @Test("a producer's body of unknown length is streamed chunked; the echo has its length and checksum",
          arguments: BackendConfiguration.allCases)
    func producerUpload(_ backend: BackendConfiguration) async throws {
        let count = 3 << 20 + 17
        try await withClient(backend) { client, _ in
            let echo = try await client.uploadBytes(body: .binary(producerBody(count: count))).ok.body.json
            #expect(echo.bodyLength == Int64(count))
            #expect(echo.bodyChecksum == patternChecksum(count: count))
            #expect(header(echo, "transfer-encoding") == ["chunked"])
            #expect(header(echo, "content-type") == ["application/octet-stream"])
        }
    }

    @Test("a large body of known length is streamed with its Content-Length", arguments: BackendConfiguration.allCases)
    func knownLengthUpload(_ backend: BackendConfiguration) async throws {
        let count = 2 << 20 + 3
        try await withClient(backend) { client, _ in
            let echo = try await client.uploadBytes(body: .binary(producerBody(count: count, announced: true))).ok.body.json
            #expect(echo.bodyLength == Int64(count))
            #expect(echo.bodyChecksum == patternChecksum(count: count))
            #expect(header(echo, "content-length") == [String(count)])
            #expect(header(echo, "transfer-encoding").isEmpty)
        }
    }

    @Test("a body that yields fewer bytes than it announced fails typed", arguments: [Int64(100), 4 << 20])
    func shortBody(_ announced: Int64) async throws {
        try await withClient(.dispatchEpoll) { client, _ in
            let body = HTTPBody(Array(repeating: UInt8(7), count: 10), length: .known(announced))
            do {
                _ = try await client.uploadBytes(body: .binary(body))
                Issue.record("a body shorter than its length was sent")
            } catch {
                #expect(transferError(error)?.code == .requestBodyFileChanged, "\(error)")
            }
        }
    }

    @Test("a multipart form streams its parts; the server sees each one", arguments: BackendConfiguration.allCases)
    func multipart(_ backend: BackendConfiguration) async throws {
        let fileSize = 300_000
        try await withClient(backend) { client, _ in
            let parts: [Operations.UploadForm.Input.Body.MultipartFormPayload] = [
                .title(.init(payload: .init(body: HTTPBody("Holiday")))),
                .file(.init(payload: .init(body: producerBody(count: fileSize)), filename: "pattern.bin")),
            ]
            let reply = try await client.uploadForm(body: .multipartForm(.init(parts))).ok.body.json
            #expect(reply.error == nil)
            #expect(reply.parts.map(\.name) == ["title", "file"])
            #expect(reply.parts.map(\.size) == [7, Int64(fileSize)])
            #expect(reply.parts.last?.filename == "pattern.bin")
            #expect(reply.parts.last?.contentType == "application/octet-stream")
            #expect(reply.parts.last?.checksum == patternChecksum(count: fileSize))
        }
    }
}
