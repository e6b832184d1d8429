import Curlew
@testable import CurlewTesting
import CurlewTestSupport
import Foundation
import Testing

/// The stub stands in for the engine without sockets: code built on the manager is tested with it.
@Suite("StubTransport")
struct StubTransportTests {
    static let base = URL(string: "https://api.example.com/v1/")

    @Test("canned responses by path and method, decoded by the manager; every request recorded")
    func cannedResponses() async throws {
        let stub = StubTransport()
        stub.respond(to: "/v1/users/1", with: .json(#"{"id":1,"name":"Ada"}"#))
        stub.respond(to: "/v1/users", method: .post, with: .json(#"{"id":2,"name":"Bob"}"#, status: 201))
        stub.respond(to: "/v1/users/2", method: .delete, with: .status(204))
        let api = RequestOperationManager(baseURL: Self.base, transport: stub)
        api.requestSerializer = JSONRequestSerializer()

        #expect(try await api.get("users/1", as: User.self) == User(id: 1, name: "Ada"))
        #expect(try await api.post("users", parameters: ["name": "Bob"], as: User.self) == User(id: 2, name: "Bob"))
        #expect(try await api.delete("users/2", as: Empty.self) == Empty())
        do {
            _ = try await api.get("users/3", as: User.self)
            Issue.record("an unrouted request succeeded")
        } catch let error as ResponseSerializationError {
            #expect(error.refusedStatus == 404)
        }
        let requests = stub.requests
        #expect(requests.map(\.head.method) == [.get, .post, .delete, .get])
        #expect(requests.map(\.url?.path) == ["/v1/users/1", "/v1/users", "/v1/users/2", "/v1/users/3"])
        #expect(requests[1].head.headerFields[.contentType] == "application/json")
        #expect(requests[1].body == .data(Data(#"{"name":"Bob"}"#.utf8)))
        await api.shutdown()
    }

    @Test("a failure passes through typed; a delayed reply cancels promptly, once; AFNetworking handlers run once")
    func failuresAndCancellation() async throws {
        let stub = StubTransport()
        stub.fail("/v1/flaky", with: TransferError(.timedOut, "simulated"))
        stub.respond(to: "/v1/slow", with: .json("{}", delay: .seconds(3600)))
        let counting = CountingTransport(stub)
        let api = RequestOperationManager(baseURL: Self.base, transport: counting)

        do {
            _ = try await api.get("flaky", as: User.self)
            Issue.record("a failing route succeeded")
        } catch let error as TransferError {
            #expect(error.code == .timedOut)
            #expect(error.failingURL?.absoluteString == "https://api.example.com/v1/flaky")
        }

        let probe = HandlerProbe()
        let operation = try #require(api.GET("slow", success: probe.success, failure: probe.failure))
        #expect(await waitUntil { counting.counts.value.starts == 2 })
        operation.cancel()
        let record = await probe.waitForOneCall()
        #expect((record.error as? TransferError)?.code == .cancelled)
        #expect(await waitUntil { counting.counts.value.completions == 2 })
        #expect(counting.counts.value.cancels == 1)
        await api.shutdown()
    }

    @Test("a body for a file destination lands in the file; a status outside 100…999 is a typed failure")
    func downloadsAndBadStatus() async throws {
        let stub = StubTransport()
        stub.respond(to: "/v1/file", with: .text("contents"))
        stub.respond(to: "/v1/odd", with: .status(42))
        let api = RequestOperationManager(baseURL: Self.base, transport: stub)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-stub-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await api.download("file", to: file)
        #expect(response.fileURL == file)
        #expect(try String(contentsOf: file, encoding: .utf8) == "contents")
        await #expect(throws: TransferError.self) { _ = try await api.data(.get, "odd") }
        await api.shutdown()
    }

    @Test("the requests of one route: by path without the query, and by method")
    func requestsOfOneRoute() async throws {
        let stub = StubTransport(fallback: .response(.status(204)))
        try await stub.withManager(baseURL: Self.base) { api in
            _ = try await api.data(.get, "users", parameters: ["page": 2])
            _ = try await api.data(.post, "users", parameters: ["name": "Ada"])
            _ = try await api.data(.get, "users/1")
        }
        #expect(stub.requests(to: "/v1/users").map(\.head.method) == [.get, .post])
        #expect(stub.requests(to: "/v1/users", method: .post).map(\.body) == [.data(Data("name=Ada".utf8))])
        #expect(stub.requests(to: "/v1/users", method: .get).map(\.url?.query) == ["page=2"])
        #expect(stub.requests(to: "/v1/users/1").count == 1)
        #expect(stub.requests(to: "/v1/users/2").isEmpty)
    }

    @Test("withManager returns what the test returns and shuts the manager down, also when the test throws")
    func managerOnTheStub() async throws {
        let stub = StubTransport()
        stub.respond(to: "/v1/users/1", with: .json(#"{"id":1,"name":"Ada"}"#))
        stub.respond(to: "/v1/slow", with: .json("{}", delay: .seconds(3600)))
        let user = try await stub.withManager(baseURL: Self.base) { api in
            try await api.get("users/1", as: User.self)
        }
        #expect(user == User(id: 1, name: "Ada"))

        // What a failing test left running is cancelled by the shutdown, and the error passes through.
        struct Abandoned: Error {}
        let left = Locked<RequestTask<Data>?>(nil)
        await #expect(throws: Abandoned.self) {
            try await stub.withManager(baseURL: Self.base) { api in
                left.set(api.dataTask(.get, "slow", as: Data.self))
                throw Abandoned()
            }
        }
        let task = try #require(left.value)
        do {
            _ = try await bounded { try await task.value }
            Issue.record("the abandoned request succeeded")
        } catch let error as TransferError {
            #expect(error.code == .cancelled)
        }
    }

    @Test("a canned response from a file: its bytes, a Content-Type after its extension unless one is given; a missing file is a typed error")
    func cannedResponseFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-stub-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let users = directory.appendingPathComponent("users.JSON")
        try Data(#"[{"id":1,"name":"Ada"}]"#.utf8).write(to: users)

        let stub = StubTransport()
        stub.respond(to: "/v1/users", with: try .file(users))
        stub.respond(to: "/v1/raw", with: try .file(users, status: 202, headerFields: [.contentType: "text/plain"]))
        try await stub.withManager(baseURL: Self.base) { api in
            #expect(try await api.get("users", as: [User].self) == [User(id: 1, name: "Ada")])
            let (data, response) = try await api.data(.get, "raw")
            #expect(data == Data(#"[{"id":1,"name":"Ada"}]"#.utf8))
            #expect(response.head.status.code == 202)
            #expect(response.head.headerFields[.contentType] == "text/plain")
        }

        let missing = #expect(throws: TransferError.self) {
            _ = try StubTransport.Response.file(directory.appendingPathComponent("missing.json"))
        }
        #expect(missing?.code == .cannotOpenFile)
    }

    @Test("a canned file's Content-Type follows its extension, in any case; an unknown one is octet-stream")
    func cannedFileContentTypes() {
        #expect(StubTransport.Response.contentType(forPathExtension: "json") == "application/json")
        #expect(StubTransport.Response.contentType(forPathExtension: "JSON") == "application/json")
        #expect(StubTransport.Response.contentType(forPathExtension: "txt") == "text/plain; charset=utf-8")
        #expect(StubTransport.Response.contentType(forPathExtension: "html") == "text/html; charset=utf-8")
        #expect(StubTransport.Response.contentType(forPathExtension: "jpeg") == "image/jpeg")
        #expect(StubTransport.Response.contentType(forPathExtension: "") == "application/octet-stream")
        #expect(StubTransport.Response.contentType(forPathExtension: "bin") == "application/octet-stream")
    }
}

struct User: Codable, Sendable, Hashable {
    var id: Int
    var name: String
}
