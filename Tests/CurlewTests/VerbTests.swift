import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// Every verb, AFNetworking style and async, against the echo route, on every backend.
@Suite("RequestOperationManager: verbs")
struct VerbTests {
    @Test("GET, HEAD, POST, PUT, PATCH and DELETE enqueue operations whose handlers run once",
          arguments: BackendConfiguration.allCases)
    func afnetworkingStyle(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            for (name, send) in Self.verbs(api) {
                let probe = HandlerProbe()
                let operation = send(probe)
                #expect(operation != nil)
                let record = await probe.waitForOneCall()
                #expect(record.successes == 1, "\(name): \(String(describing: record.error))")
                #expect(operation?.isFinished == true)
                if name == "HEAD" {
                    #expect(operation?.response?.head.status.code == 200)
                    #expect(operation?.responseData?.isEmpty ?? true)
                    continue
                }
                let json = try #require(record.object as? JSONValue, "\(name): the default serializer makes a JSONValue")
                #expect(json["method"]?.stringValue == name)
                #expect(json["path"]?.stringValue == "/echo/\(name.lowercased())")
                if name == "GET" || name == "DELETE" {
                    #expect(json["query"]?.stringValue == "page=2&q=swift")
                    #expect(json["bodyLength"]?.intValue == 0)
                } else {
                    #expect(json["query"]?.stringValue == "")
                    #expect(json["bodyLength"]?.intValue == "page=2&q=swift".utf8.count)
                }
            }
        }
    }

    /// One call per verb, each to `/echo/<verb>` with the same parameters.
    static func verbs(_ api: RequestOperationManager) -> [(String, (HandlerProbe) -> RequestOperation?)] {
        let parameters: Parameters = ["q": "swift", "page": 2]
        return [
            ("GET", { api.GET("echo/get", parameters: parameters, success: $0.success, failure: $0.failure) }),
            ("HEAD", { api.HEAD("echo/head", success: $0.success, failure: $0.failure) }),
            ("POST", { api.POST("echo/post", parameters: parameters, success: $0.success, failure: $0.failure) }),
            ("PUT", { api.PUT("echo/put", parameters: parameters, success: $0.success, failure: $0.failure) }),
            ("PATCH", { api.PATCH("echo/patch", parameters: parameters, success: $0.success, failure: $0.failure) }),
            ("DELETE", { api.DELETE("echo/delete", parameters: parameters, success: $0.success, failure: $0.failure) }),
        ]
    }

    @Test("get, post, put, patch and delete decode typed values", arguments: BackendConfiguration.allCases)
    func asyncStyle(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            api.requestSerializer = JSONRequestSerializer()
            let body = NewItem(name: "curlew", tags: ["a", "b"])
            let bodyBytes = try JSONRequestSerializer().encoder.encode(body)

            let get = try await api.get("echo/get", parameters: ["page": 2], as: Echo.self)
            #expect(get.method == "GET" && get.query == "page=2")
            let post = try await api.post("echo/post", parameters: body, as: Echo.self)
            let put = try await api.put("echo/put", parameters: body, as: Echo.self)
            let patch = try await api.patch("echo/patch", parameters: body, as: Echo.self)
            for (echo, method) in [(post, "POST"), (put, "PUT"), (patch, "PATCH")] {
                #expect(echo.method == method)
                #expect(echo.headerValues("Content-Type") == ["application/json"])
                #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(bodyBytes)))
            }
            let delete = try await api.delete("echo/delete", parameters: Filter(id: 7), as: Echo.self)
            #expect(delete.method == "DELETE" && delete.query == "id=7" && delete.bodyLength == 0)

            let (data, response) = try await api.data(.get, "bytes/100")
            #expect(Array(data) == TestServer.expectedBody(count: 100))
            #expect(response.head.status.code == 200)
            #expect(response.metrics.total > .zero)
        }
    }

    @Test("a manager made with a backend runs on it and shuts its engine down", arguments: BackendConfiguration.allCases)
    func ownEngine(_ backend: BackendConfiguration) async throws {
        let api = RequestOperationManager(baseURL: try testServer().baseURL, backend: backend.backend)
        let engine = try #require(api.engine)
        let echo = try await api.get("echo", as: Echo.self)
        #expect(echo.method == "GET")
        await api.shutdown()
        let after = await engine.diagnostics()
        #expect(after.openSockets == 0)
        #expect(after.scheduler == SchedulerDiagnostics())
        await #expect(throws: TransferError.self) { _ = try await api.get("echo", as: Echo.self) }
    }
}

struct NewItem: Codable, Sendable, Hashable {
    var name: String
    var tags: [String]
}

struct Filter: Encodable, Sendable {
    var id: Int
}
