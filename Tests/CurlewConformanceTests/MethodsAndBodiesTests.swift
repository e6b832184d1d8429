import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

@Suite("Methods and bodies")
struct MethodsAndBodiesTests {
    static let methods: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete, .options, HTTPRequest.Method("PROPFIND")!]

    @Test("each method without a body", arguments: BackendConfiguration.allCases)
    func methodsWithoutBody(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            for method in Self.methods {
                let response = try await engine.fetch(TransferRequest(url: try testServer().url(.echo), method: method))
                let echo = try EchoReply(response)
                #expect(response.head.status == .ok)
                #expect(echo.method == method.rawValue)
                #expect(echo.bodyLength == 0)
                #expect(echo.headerValues("Content-Type").isEmpty, "\(method): curl's form content type leaked")
            }
        }
    }

    @Test("HEAD gets the head and no body", arguments: BackendConfiguration.allCases)
    func head(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let response = try await engine.fetch(TransferRequest(url: try testServer().url(.bytes(1000)), method: .head))
            #expect(response.head.status == .ok)
            #expect(response.head.headerFields[.contentLength] == "1000")
            #expect(response.body?.isEmpty == true)
        }
    }

    @Test("each method with a body from memory", arguments: BackendConfiguration.allCases)
    func methodsWithBody(_ backend: BackendConfiguration) async throws {
        let body = Data(TestServer.expectedBody(count: 100_000))
        try await withEngine(backend) { engine in
            for method in Self.methods where method != .get {
                var request = TransferRequest(url: try testServer().url(.echo), method: method, body: .data(body))
                request.head.headerFields[.contentType] = "application/octet-stream"
                let echo = try EchoReply(try await engine.fetch(request))
                #expect(echo.method == method.rawValue)
                #expect(echo.bodyLength == body.count)
                #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(body)))
                #expect(echo.headerValues("Content-Type") == ["application/octet-stream"])
                #expect(echo.headerValues("Expect").isEmpty, "curl's 100-continue wait leaked")
            }
        }
    }

    @Test("a body streamed from a file", arguments: BackendConfiguration.allCases)
    func bodyFromFile(_ backend: BackendConfiguration) async throws {
        let bytes = TestServer.expectedBody(count: 5 << 20, offset: 7)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-upload-\(UUID().uuidString)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withEngine(backend) { engine in
            let request = TransferRequest(url: try testServer().url(.upload), method: .put, body: .file(file))
            let (result, recorder) = try await engine.run(request)
            let echo = try EchoReply(try result.get())
            #expect(echo.bodyLength == bytes.count)
            #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(bytes)))
            let sent = recorder.events.value.progress.map(\.bytesSent)
            #expect(sent == sent.sorted(), "upload progress went backwards")
            #expect(sent.last == Int64(bytes.count))
            #expect(recorder.events.value.progress.last?.expectedBytesToSend == Int64(bytes.count))
        }
    }

    @Test("a missing body file fails with cannotOpenFile", arguments: BackendConfiguration.allCases)
    func missingBodyFile(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let request = TransferRequest(url: try testServer().url(.upload), method: .post,
                                          body: .file(URL(fileURLWithPath: "/nonexistent/curlew-body")))
            #expect(try await engine.failure(request).code == .cannotOpenFile)
        }
    }

    @Test("request headers arrive as sent", arguments: BackendConfiguration.allCases)
    func requestHeaders(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let request = try TransferRequest(method: "GET", url: try testServer().url(.echo).absoluteString,
                                              headers: [("X-Curlew", "one"), ("X-Empty", ""), ("Accept", "text/plain")])
            let echo = try EchoReply(try await engine.fetch(request))
            #expect(echo.headerValues("X-Curlew") == ["one"])
            #expect(echo.headerValues("X-Empty") == [""])
            #expect(echo.headerValues("Accept") == ["text/plain"])
        }
    }

    @Test("any status is a completed transfer", arguments: BackendConfiguration.allCases)
    func statuses(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            for code in [200, 201, 204, 304, 404, 500, 503, 599] {
                let response = try await engine.fetch(try .get(.status(code)))
                #expect(response.head.status.code == code)
            }
        }
    }

    @Test("JSON and chunked bodies", arguments: BackendConfiguration.allCases)
    func jsonAndChunked(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let json = try await engine.fetch(try .get(.json))
            #expect(json.head.headerFields[.contentType] == "application/json")
            #expect(try JSONSerialization.jsonObject(with: try #require(json.body)) is [String: Any])
            let chunked = try await engine.fetch(try .get(.chunked(bytes: 300_000, chunkSize: 1000)))
            #expect(chunked.body == Data(TestServer.expectedBody(count: 300_000)))
            #expect(chunked.head.headerFields[.contentLength] == nil)
        }
    }

    @Test("the async API", arguments: BackendConfiguration.allCases)
    func asyncExecute(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let response = try await engine.execute(try .get(.bytes(1234)))
            #expect(response.body == Data(TestServer.expectedBody(count: 1234)))
            #expect(response.url == (try testServer().url(.bytes(1234))))
        }
    }
}
