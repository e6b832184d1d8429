import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

/// Serializers on real transfers, on every backend: requests built by request serializers as the
/// server sees them, multipart bodies streamed from disk (also resent after a 307), and
/// RequestOperation with each response serializer, failures included.
@Suite("RequestOperation: serializers")
struct SerializationTests {
    /// Runs `request` as an operation with `serializer` and returns the finished operation.
    func run(_ request: TransferRequest, engine: TransferEngine, serializer: any ResponseSerializer) async -> (RequestOperation, OperationProbe.Record) {
        let operation = RequestOperation(request: request, engine: engine)
        operation.responseSerializer = serializer
        let probe = OperationProbe(operation)
        operation.start()
        let record = await probe.expectFinishedOnce()
        return (operation, record)
    }

    // MARK: Requests

    @Test("serialized requests as the server sees them: query, form body, JSON body, headers",
          arguments: BackendConfiguration.allCases)
    func requests(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let url = try testServer().url(.echo)
            var form = HTTPRequestSerializer()
            try form.setAuthorization(username: "user", password: "pass")
            let echo = DecodableResponseSerializer<EchoReply>()

            let get = try await self.run(form.request(method: .get, url: url, parameters: ["q": "a b+c", "tags": ["x", "y"]]),
                                         engine: engine, serializer: echo).0.responseValue(as: EchoReply.self)
            #expect(get.method == "GET")
            #expect(get.query == "q=a%20b%2Bc&tags%5B%5D=x&tags%5B%5D=y")
            #expect(get.headerValues("Authorization") == ["Basic dXNlcjpwYXNz"])
            #expect(get.headerValues("User-Agent").first?.hasPrefix("Curlew/") == true)
            #expect(get.bodyLength == 0)

            let post = try await self.run(form.request(method: .post, url: url, parameters: ["name": "é", "n": 1]),
                                          engine: engine, serializer: echo).0.responseValue(as: EchoReply.self)
            #expect(post.headerValues("Content-Type") == ["application/x-www-form-urlencoded"])
            #expect(post.bodyChecksum == FNV1a64.hex(TestServer.checksum(Array("n=1&name=%C3%A9".utf8))))

            let json = try JSONRequestSerializer().request(method: .patch, url: url, parameters: ["a": [1, 2], "b": nil])
            let patch = try await self.run(json, engine: engine, serializer: echo).0.responseValue(as: EchoReply.self)
            #expect(patch.method == "PATCH")
            #expect(patch.headerValues("Content-Type") == ["application/json"])
            #expect(patch.bodyChecksum == FNV1a64.hex(TestServer.checksum(Array(#"{"a":[1,2],"b":null}"#.utf8))))
        }
    }

    // MARK: Multipart

    @Test("a multipart upload with fields and files, echoed part by part", arguments: BackendConfiguration.allCases)
    func multipart(_ backend: BackendConfiguration) async throws {
        let file = try TemporaryFiles.write(Data(TestServer.expectedBody(count: 3_000_000)), name: "big.bin", prefix: "curlew-ops")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            var form = MultipartFormData()
            try form.append(parameters: ["title": "Holiday", "tags": ["sea"]])
            try form.append(fileAt: file, name: "upload")
            try form.append(Data("{}".utf8), name: "meta", fileName: "meta.json")
            let request = try HTTPRequestSerializer().multipartRequest(url: try testServer().url(.multipart()), form: form)
            let (operation, _) = await self.run(request, engine: engine, serializer: DecodableResponseSerializer<MultipartEchoReply>())
            let reply = try await bounded { try await operation.responseValue(as: MultipartEchoReply.self) }
            #expect(reply.error == nil)
            #expect(reply.bodyLength == Int(form.contentLength))
            #expect(reply.parts.map(\.name) == ["tags[]", "title", "upload", "meta"])
            #expect(reply.parts.map(\.filename) == [nil, nil, "big.bin", "meta.json"])
            #expect(reply.parts.map(\.contentType) == [nil, nil, "application/octet-stream", "application/json"])
            #expect(reply.parts.map(\.size) == [3, 7, 3_000_000, 2])
            #expect(reply.parts[2].checksum == FNV1a64.hex(TestServer.checksum(TestServer.expectedBody(count: 3_000_000))))
            #expect(reply.parts[1].checksum == FNV1a64.hex(TestServer.checksum(Array("Holiday".utf8))))
        }
    }

    @Test("a 307 resends the multipart body from the start (curl rewinds the parts)", arguments: BackendConfiguration.allCases)
    func multipartRedirect(_ backend: BackendConfiguration) async throws {
        let file = try TemporaryFiles.write(Data(TestServer.expectedBody(count: 200_000)), name: "r.bin", prefix: "curlew-ops")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            var form = MultipartFormData()
            try form.append(Data("v".utf8), name: "field")
            try form.append(fileAt: file, name: "file")
            let url = try testServer().url(.redirectTo(url: Route.multipart().path, status: 307))
            let request = try HTTPRequestSerializer().multipartRequest(url: url, form: form)
            let (operation, _) = await self.run(request, engine: engine, serializer: DecodableResponseSerializer<MultipartEchoReply>())
            let reply = try await bounded { try await operation.responseValue(as: MultipartEchoReply.self) }
            #expect(operation.response?.metrics.redirectCount == 1)
            #expect(reply.error == nil)
            #expect(reply.parts.map(\.size) == [1, 200_000])
            #expect(reply.parts.last?.checksum == FNV1a64.hex(TestServer.checksum(TestServer.expectedBody(count: 200_000))))
        }
    }

    @Test("a file that changed size after the form was made fails the transfer, nothing short is sent",
          arguments: BackendConfiguration.allCases)
    func fileChanged(_ backend: BackendConfiguration) async throws {
        let file = try TemporaryFiles.write(Data(TestServer.expectedBody(count: 10_000)), name: "c.bin", prefix: "curlew-ops")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            var form = MultipartFormData()
            try form.append(fileAt: file, name: "file")
            let request = try HTTPRequestSerializer().multipartRequest(url: try testServer().url(.multipart()), form: form)
            for size in [5_000, 20_000] {
                try Data(count: size).write(to: file)
                let (operation, record) = await self.run(request, engine: engine, serializer: DataResponseSerializer())
                #expect(record.failures == 1)
                #expect((operation.error as? TransferError)?.code == .requestBodyFileChanged)
            }
        }
    }

    // MARK: Response serializers

    @Test("each response serializer on a real response", arguments: BackendConfiguration.allCases)
    func responseSerializers(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let server = try testServer()
            let json = await self.run(TransferRequest(url: server.url(.json)), engine: engine,
                                          serializer: JSONResponseSerializer(removesKeysWithNullValues: true)).0
            let value = try await bounded { try await json.responseValue(as: JSONValue.self) }
            #expect(value["numbers"] == [1, 2, 3])
            #expect(value["nested"]?["text"]?.stringValue == "café \"quoted\" \\ /")
            #expect(value["nested"]?["nothing"] == nil, "null members removed")
            #expect(json.responseObject as? JSONValue == value)

            struct Document: Decodable, Sendable { var name: String; var numbers: [Int] }
            let decoded = await self.run(TransferRequest(url: server.url(.json)), engine: engine,
                                             serializer: DecodableResponseSerializer<Document>()).0
            #expect(try await bounded { try await decoded.responseValue(as: Document.self) }.numbers == [1, 2, 3])

            let text = await self.run(TransferRequest(url: server.url(.delay(1))), engine: engine,
                                          serializer: StringResponseSerializer()).0
            #expect(try await bounded { try await text.responseValue(as: String.self) } == "delayed\n")

            let bytes = await self.run(TransferRequest(url: server.url(.bytes(1000))), engine: engine,
                                           serializer: HTTPResponseSerializer()).0
            #expect(try await bounded { try await bytes.responseValue(as: Data?.self) } == Data(TestServer.expectedBody(count: 1000)))

            let xml = await self.run(TransferRequest(url: server.url(.xml)), engine: engine, serializer: XMLResponseSerializer()).0
            let root = try await bounded { try await xml.responseValue(as: XMLElementNode.self) }
            #expect(root.elements(named: "item").map(\.text) == ["café", ""])

            let plist = await self.run(TransferRequest(url: server.url(.propertyList)), engine: engine,
                                           serializer: PropertyListResponseSerializer()).0
            #expect(try await bounded { try await plist.responseValue(as: PropertyListValue.self) }["name"]?.stringValue == "curlew")

            let compound = await self.run(TransferRequest(url: server.url(.xml)), engine: engine,
                                              serializer: CompoundResponseSerializer([JSONResponseSerializer(), XMLResponseSerializer()])).0
            #expect((compound.responseObject as? XMLElementNode)?.name == "feed")
        }
    }

    @Test("a 404 reaches the failure handler with the status, the head and the body", arguments: BackendConfiguration.allCases)
    func notFound(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let request = TransferRequest(url: try testServer().url(.status(404)))
            for serializer in [JSONResponseSerializer() as any ResponseSerializer, HTTPResponseSerializer(), StringResponseSerializer(),
                               DecodableResponseSerializer<Empty>()] {
                let (operation, record) = await self.run(request, engine: engine, serializer: serializer)
                #expect(record.failures == 1 && record.successes == 0)
                let error = try #require(operation.error as? ResponseSerializationError)
                guard case .unacceptableStatusCode(404) = error.reason else {
                    Issue.record("unexpected reason: \(error)")
                    continue
                }
                #expect(error.response.status.code == 404)
                #expect(error.body == Data("404 Not Found\n".utf8))
                #expect(error.url == request.url)
                #expect(operation.response?.head.status.code == 404)
                await #expect(throws: ResponseSerializationError.self) { try await bounded { try await operation.responseValue(as: JSONValue.self) } }
            }
            // The default serializer still passes a 404 through as success, as before.
            let (passThrough, record) = await self.run(request, engine: engine, serializer: DataResponseSerializer())
            #expect(record.successes == 1)
            #expect(passThrough.responseObject as? Data == Data("404 Not Found\n".utf8))
        }
    }

    @Test("HEAD: an empty body decodes as Empty because the operation passes its method", arguments: BackendConfiguration.allCases)
    func head(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let request = TransferRequest(url: try testServer().url(.json), method: .head)
            let (operation, record) = await self.run(request, engine: engine, serializer: DecodableResponseSerializer<Empty>())
            #expect(record.successes == 1)
            #expect(try await bounded { try await operation.responseValue(as: Empty.self) } == Empty())
        }
    }

    @Test("responseValue: a nil value, and the wrong type is a typed error", arguments: BackendConfiguration.allCases)
    func responseValueTypes(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let toFile = TransferRequest(url: try testServer().url(.bytes(10)), destination: .file(destination))
            let (operation, _) = await self.run(toFile, engine: engine, serializer: DataResponseSerializer())
            #expect(operation.responseObject == nil, "a nil Data? is nil, not a boxed optional")
            #expect(try await bounded { try await operation.responseValue(as: Data?.self) } == nil)
            await #expect(throws: ResponseValueTypeMismatch.self) { try await bounded { try await operation.responseValue(as: Int.self) } }
        }
    }
}
