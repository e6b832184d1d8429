import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// What the manager's serializers make of real responses, on every backend: JSON round trips,
/// multipart forms, and the failures — refused status or content type with the body attached, a
/// `Decodable` that names where it failed — which never reach a success handler.
@Suite("RequestOperationManager: serialization")
struct SerializationTests {
    @Test("a JSON body goes out as the encoder wrote it and the echo decodes as JSON and as a Decodable",
          arguments: BackendConfiguration.allCases)
    func jsonRoundTrip(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            api.requestSerializer = JSONRequestSerializer()
            let item = NewItem(name: "café \"quoted\"", tags: ["ü", "/"])
            let expected = try JSONRequestSerializer().encoder.encode(item)

            let probe = HandlerProbe()
            api.POST("echo", parameters: item, success: probe.success, failure: probe.failure)
            let record = await probe.waitForOneCall()
            let json = try #require(record.object as? JSONValue)
            #expect(json["method"] == "POST")
            #expect(json["bodyLength"]?.intValue == expected.count)
            #expect(json["bodyChecksum"]?.stringValue == FNV1a64.hex(TestServer.checksum(expected)))

            let document = try await api.get("json", as: Document.self)
            #expect(document.name == "curlew" && document.numbers == [1, 2, 3] && document.nested.text == "café \"quoted\" \\ /")
        }
    }

    @Test("a multipart form is echoed part by part, AFNetworking style and async", arguments: BackendConfiguration.allCases)
    func multipart(_ backend: BackendConfiguration) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-manager-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("log.txt")
        let contents = Data(TestServer.expectedBody(count: 200_000))
        try contents.write(to: file)

        try await withManager(backend) { api in
            let probe = HandlerProbe()
            api.POST("multipart", parameters: ["kind": "log", "tags": ["a", "b"]], constructingBody: { form in
                try form.append(fileAt: file, name: "file")
            }, success: probe.success, failure: probe.failure)
            let record = await probe.waitForOneCall()
            let json = try #require(record.object as? JSONValue, "\(String(describing: record.error))")
            let parts = try #require(json["parts"]?.arrayValue)
            #expect(parts.map { $0["name"]?.stringValue } == ["kind", "tags[]", "tags[]", "file"])
            #expect(parts.last?["filename"] == "log.txt")
            #expect(parts.last?["contentType"] == "text/plain")
            #expect(parts.last?["size"]?.intValue == contents.count)
            #expect(parts.last?["checksum"]?.stringValue == FNV1a64.hex(TestServer.checksum(contents)))

            let reply = try await api.post("multipart", constructingBody: { form in
                try form.append(Data("hello".utf8), name: "greeting", fileName: "hello.txt")
            }, as: MultipartEchoReply.self)
            #expect(reply.error == nil)
            #expect(reply.parts.map(\.name) == ["greeting"])
            #expect(reply.parts.first?.size == 5)
        }
    }

    @Test("a refused status or content type fails with ResponseSerializationError carrying the body, never success",
          arguments: BackendConfiguration.allCases)
    func validationFailures(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            // AFNetworking style: 404 and 500, then a 200 whose content type JSON does not accept.
            for code in [404, 500] {
                let probe = HandlerProbe()
                api.GET("status/\(code)", success: probe.success, failure: probe.failure)
                let record = await probe.waitForOneCall()
                #expect(record.successes == 0)
                let error = try #require(record.error as? ResponseSerializationError)
                #expect(error.refusedStatus == code)
                #expect(error.response.status.code == code)
                #expect(error.body.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("\(code) ") == true)
            }
            let probe = HandlerProbe()
            api.GET("bytes/10", success: probe.success, failure: probe.failure)
            let record = await probe.waitForOneCall()
            #expect(record.successes == 0)
            let error = try #require(record.error as? ResponseSerializationError)
            guard case .unacceptableContentType(let type) = error.reason else {
                Issue.record("expected a content-type refusal, got \(error)")
                return
            }
            #expect(type == "application/octet-stream")
            #expect(error.body.map(Array.init) == TestServer.expectedBody(count: 10))

            // async: the same refusals are thrown.
            do {
                _ = try await api.get("status/500", as: Echo.self)
                Issue.record("a 500 decoded")
            } catch let error as ResponseSerializationError {
                #expect(error.refusedStatus == 500)
                #expect(error.body.map { String(decoding: $0, as: UTF8.self) } == "500 Internal Server Error\n")
            }
            do {
                _ = try await api.data(.get, "status/404")
                Issue.record("a 404 passed data(_:_:)")
            } catch let error as ResponseSerializationError {
                #expect(error.refusedStatus == 404)
            }
        }
    }

    @Test("the typed methods take the status codes and content types of the serializer set last",
          arguments: BackendConfiguration.allCases)
    func typedMethodsFollowTheSerializerSetLast(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            var serializer = JSONResponseSerializer()
            serializer.acceptableStatusCodes = IndexSet(integer: 404)
            api.responseSerializer = serializer
            let (body, response) = try await api.data(.get, "status/404")
            #expect(response.head.status.code == 404)
            #expect(String(decoding: body, as: UTF8.self).hasPrefix("404 "))
            do {
                _ = try await api.data(.get, "bytes/3")
                Issue.record("a 200 passed when only 404 is acceptable")
            } catch let error as ResponseSerializationError {
                #expect(error.refusedStatus == 200)
            }

            // Content types: the echo's JSON is refused once only text/plain is acceptable…
            var plainOnly = HTTPResponseSerializer()
            plainOnly.acceptableContentTypes = ["text/plain"]
            api.responseSerializer = plainOnly
            do {
                _ = try await api.get("echo", as: Echo.self)
                Issue.record("a JSON body passed when only text/plain is acceptable")
            } catch let error as ResponseSerializationError {
                guard case .unacceptableContentType = error.reason else {
                    Issue.record("expected a content-type refusal, got \(error)")
                    return
                }
            }
            // …and accepted again with the default serializer.
            api.responseSerializer = JSONResponseSerializer()
            let echo = try await api.get("echo", as: Echo.self)
            #expect(echo.method == "GET")
        }
    }

    @Test("a Decodable failure names the coding path and never reaches success", arguments: BackendConfiguration.allCases)
    func decodingFailure(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            do {
                _ = try await api.get("json", as: WrongDocument.self)
                Issue.record("the document decoded as WrongDocument")
            } catch let error as ResponseSerializationError {
                guard case .decodingFailed(let underlying, let codingPath) = error.reason else {
                    Issue.record("expected decodingFailed, got \(error)")
                    return
                }
                #expect(codingPath == ["nested", "flag"], "\(underlying)")
                #expect(error.body.map { String(decoding: $0, as: UTF8.self) } == TestServer.jsonDocument)
            }
            // AFNetworking style, with a Decodable serializer: the failure handler, once, never success.
            api.responseSerializer = DecodableResponseSerializer<WrongDocument>()
            let probe = HandlerProbe()
            api.GET("json", success: probe.success, failure: probe.failure)
            let record = await probe.waitForOneCall()
            #expect(record.successes == 0)
            if case .decodingFailed(_, let codingPath)? = (record.error as? ResponseSerializationError)?.reason {
                #expect(codingPath == ["nested", "flag"])
            } else {
                Issue.record("expected decodingFailed, got \(String(describing: record.error))")
            }
            let task = api.dataTask(.get, "json", as: WrongDocument.self)
            await #expect(throws: ResponseSerializationError.self) { _ = try await task.value }
            #expect(task.isFinished)
        }
    }

    @Test("a 204 decodes as Empty or as nil for an Optional; any other empty body is an error",
          arguments: BackendConfiguration.allCases)
    func noContent(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            #expect(try await api.get("status/204", as: Empty.self) == Empty())
            let optional = try await api.delete("status/204", as: Echo?.self)
            #expect(optional == nil)
            let probe = HandlerProbe()
            api.DELETE("status/204", success: probe.success, failure: probe.failure)
            let record = await probe.waitForOneCall()
            #expect(record.successes == 1)
            #expect(record.object as? JSONValue == JSONValue.null)
            do {
                _ = try await api.get("status/204", as: Echo.self)
                Issue.record("a 204 decoded as a non-optional Echo")
            } catch let error as ResponseSerializationError {
                guard case .emptyBody = error.reason else {
                    Issue.record("expected emptyBody, got \(error)")
                    return
                }
            }
        }
    }
}

/// `TestServer.jsonDocument`.
struct Document: Decodable, Sendable {
    struct Nested: Decodable, Sendable {
        var flag: Bool
        var nothing: Int?
        var text: String
    }

    var name: String
    var kind: String
    var version: Int
    var numbers: [Int]
    var nested: Nested
}

/// `TestServer.jsonDocument` with the wrong type for `nested.flag`.
struct WrongDocument: Decodable, Sendable {
    struct Nested: Decodable, Sendable {
        var flag: String
    }

    var name: String
    var nested: Nested
}
