import Curlew
import CurlewOpenAPI
import CurlewTesting
import CurlewTestServer
import CurlewTestSupport
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The generated client over Curlew, on every backend: JSON both ways, parameters in the path, the
/// query and the header fields, and every status — documented or not — reaching the client.
@Suite("OpenAPI transport: requests and statuses")
struct RoundTripTests {
    @Test("a JSON response decodes into the generated type", arguments: BackendConfiguration.allCases)
    func json(_ backend: BackendConfiguration) async throws {
        try await withClient(backend) { client, _ in
            let document = try await client.getDocument().ok.body.json
            #expect(document.name == "curlew")
            #expect(document.numbers == [1, 2, 3])
            #expect(document.nested.flag)
            #expect(document.nested.text == "café \"quoted\" \\ /")
        }
    }

    @Test("path, query and header parameters arrive percent-encoded; a small JSON body is sent with its length",
          arguments: BackendConfiguration.allCases)
    func parameters(_ backend: BackendConfiguration) async throws {
        try await withClient(backend) { client, _ in
            let echo = try await client.echoNote(
                path: .init(label: "a b/ç?#"),
                query: .init(tag: ["x&y", "z"]),
                headers: .init(xNote: "hello"),
                body: .json(.init(title: "Curlew", tags: ["swift", "linux"]))
            ).ok.body.json
            #expect(echo.method == "POST")
            #expect(echo.path == "/echo/a%20b%2F%C3%A7%3F%23")
            #expect(echo.query == "tag=x%26y&tag=z")
            #expect(header(echo, "x-note") == ["hello"])
            #expect(header(echo, "content-type") == ["application/json; charset=utf-8"])
            // Of known length: announced with Content-Length, not chunked.
            #expect(header(echo, "content-length") == [String(echo.bodyLength)])
            #expect(header(echo, "transfer-encoding").isEmpty)
            #expect(echo.bodyLength > 0)
            // The manager's request serializer's default header fields apply.
            #expect(header(echo, "user-agent").first?.hasPrefix("Curlew/") == true)
        }
    }

    @Test("documented statuses decode as such; an undocumented one arrives with its body", arguments: BackendConfiguration.allCases)
    func statuses(_ backend: BackendConfiguration) async throws {
        try await withClient(backend) { client, _ in
            let ok = try await client.getStatus(path: .init(code: 200)).ok.body.plainText
            #expect(try await String(collecting: ok, upTo: 1024) == "200 OK\n")

            _ = try await client.getStatus(path: .init(code: 204)).noContent

            let missing = try await client.getStatus(path: .init(code: 404)).notFound.body.plainText
            #expect(try await String(collecting: missing, upTo: 1024) == "404 Not Found\n")

            guard case .undocumented(let status, let payload) = try await client.getStatus(path: .init(code: 418)) else {
                Issue.record("418 is not in the document: expected .undocumented")
                return
            }
            #expect(status == 418)
            let body = try #require(payload.body)
            #expect(try await String(collecting: body, upTo: 1024).hasPrefix("418 "))

            // A status the manager's response serializer refuses (it accepts 2xx) still reaches the client.
            guard case .undocumented(503, _) = try await client.getStatus(path: .init(code: 503)) else {
                Issue.record("503 is not in the document: expected .undocumented")
                return
            }
        }
    }

    @Test("HEAD, 204 and 304 have no body; any other response has one, with its length",
          arguments: BackendConfiguration.allCases)
    func bodies(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(on: backend.makeScheduler()) { engine in
            let manager = RequestOperationManager(engine: engine)
            let transport = CurlewClientTransport(manager: manager)
            func send(_ method: HTTPRequest.Method, _ path: String) async throws -> (HTTPResponse, HTTPBody?) {
                try await transport.send(HTTPRequest(method: method, scheme: nil, authority: nil, path: path), body: nil,
                                         baseURL: server.baseURL, operationID: "test")
            }
            let (head, headBody) = try await send(.head, "/bytes/1000")
            #expect(head.status == .ok)
            #expect(head.headerFields[.contentLength] == "1000")
            #expect(headBody == nil)
            for code in [204, 304] {
                let (response, body) = try await send(.get, "/status/\(code)")
                #expect(response.status.code == code)
                #expect(body == nil)
            }
            let (_, body) = try await send(.get, "/bytes/1000")
            let bytes = try #require(body)
            #expect(bytes.length == .known(1000))
            #expect(bytes.iterationBehavior == .single)
            #expect(try await Array(collecting: bytes, upTo: 1000) == TestServer.expectedBody(count: 1000))

            let generated = try await Client(serverURL: server.baseURL, transport: transport).headBytes(path: .init(count: 1000))
            #expect(try generated.ok.headers.contentLength == 1000)
            await manager.shutdown()
        }
    }

    @Test("a server URL that makes no URL fails typed, and nothing is sent")
    func badServerURL() async throws {
        let stub = StubTransport()
        let transport = CurlewClientTransport(manager: RequestOperationManager(transport: stub))
        let client = Client(serverURL: try #require(URL(string: "/relative")), transport: transport)
        do {
            _ = try await client.getDocument()
            Issue.record("a relative server URL was accepted")
        } catch {
            #expect(transferError(error)?.code == .badURL)
            #expect(stub.requests.isEmpty)
        }
    }
}

/// The values of the header named `name` in an echo.
func header(_ echo: Components.Schemas.EchoReply, _ name: String) -> [String] {
    echo.headers.compactMap { pair in pair.count == 2 && pair[0].lowercased() == name ? pair[1] : nil }
}
