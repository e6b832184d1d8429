import Curlew
import CurlewTesting
import CurlewTestServer
import CurlewTestSupport
import Testing

/// The first lines a new user writes: `import Curlew` alone brings `URL` and `Data`; parameters mix
/// variables; headers go with one request; text, XML and any serializer come back typed; the response
/// comes with the value; one error type to catch, with a message a person can act on. Every backend.
@Suite("RequestOperationManager: the first lines a user writes")
struct FirstLinesTests {
    struct Found: Decodable, Sendable {
        var query: String
    }

    @Test("parameters mixing variables, per-request headers, text, XML, and the response with the value",
          arguments: BackendConfiguration.allCases)
    func firstLines(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            let query = "swift curlew"
            let page = 2
            let found = try await api.get("echo/search", parameters: ["q": query, "page": page], as: Found.self)
            #expect(found.query == "page=2&q=swift%20curlew")
            let tagged = try await api.get("echo/items/1", headers: ["If-None-Match": "\"v7\""], as: Echo.self)
            #expect(tagged.headerValues("If-None-Match") == ["\"v7\""])
            let later = try await api.get("echo/items/2", as: Echo.self)
            #expect(later.headerValues("If-None-Match").isEmpty, "a header given to one call stayed for the next")

            let text = try await api.get(Route.status(200).path, as: String.self)
            #expect(text == "200 OK\n")
            let feed = try await api.get("xml", serializer: XMLResponseSerializer())
            #expect(feed.name == "feed")

            let reply = try await api.response(.get, "echo/users/1", as: Echo.self)
            #expect(reply.value.path == "/echo/users/1")
            #expect(reply.status.code == 200)
            #expect(reply.headers["content-type"] == "application/json")
            #expect(reply.headers["Not A Name"] == nil)

            let head = try await api.head("echo/head")
            #expect(head.status.code == 200)
        }
    }

    @Test("one error type to catch, with the status and a message a person can act on", arguments: BackendConfiguration.allCases)
    func oneErrorType(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            do {
                _ = try await api.get(Route.status(404).path, as: Echo.self)
                Issue.record("a 404 produced a value")
            } catch let error as CurlewError {
                #expect(error.statusCode == 404)
                #expect(error.responseBody.map { String(decoding: $0, as: UTF8.self) } == "404 Not Found\n")
                #expect(error.localizedDescription.contains("404"), "\(error.localizedDescription)")
                #expect(!error.localizedDescription.contains("could not be completed"))
            }
            let cancelled = Task { try await api.get(Route.delay(60_000).path, as: Data.self) }
            cancelled.cancel()
            do {
                _ = try await cancelled.value
                Issue.record("a cancelled call produced a value")
            } catch let error as CurlewError {
                #expect(error.statusCode == nil)
                #expect(!error.localizedDescription.isEmpty)
                #expect((error as? TransferError)?.code == .cancelled)
            }
            do {
                _ = try await api.get("echo", headers: ["Bad\nName": "x"], as: Echo.self)
                Issue.record("an invalid header name was sent")
            } catch let error as CurlewError {
                #expect(error.requestURL == nil || error.statusCode == nil)
                #expect(!error.localizedDescription.isEmpty)
            }
        }
    }

    @Test("a 204 is JSON's null through the typed call too, as through GET")
    func noContentIsNull() async throws {
        let stub = StubTransport()
        stub.respond(to: "/v1/gone", with: .status(204))
        let api = RequestOperationManager(baseURL: URL(string: "https://api.example.com/v1/")!, transport: stub)
        #expect(try await api.get("gone", as: JSONValue.self) == .null)
    }

    @Test("a backend describes itself as it is written in Swift")
    func backendNames() {
        #expect(Backend.dispatch.description == "dispatch")
        #expect(Backend.dispatch(sockets: .sourcePerSocket).description == "dispatch(sockets: .sourcePerSocket)")
        #expect(Backend.runLoop.description == "runLoop")
        #expect(Backend.runLoop(sockets: .cfSocket).description == "runLoop(sockets: .cfSocket)")
    }
}
