import Curlew
import CurlewTesting
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// `download(_:to:)` is all or nothing for the destination: a refused status, a cancel, a broken
/// connection leave the user's file exactly as it was — absent, or its old bytes — and no temporary
/// file beside it; only a download that succeeded replaces it. The stub keeps the same rule.
@Suite("RequestOperationManager: downloads all or nothing")
struct DownloadDestinationTests {
    @Test("a 404 keeps the user's file, or its absence, and says why", arguments: BackendConfiguration.allCases)
    func refusedStatus(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            for existing in [true, false] {
                try await DownloadFixture.withDestination(existing: existing) { directory, destination in
                    do {
                        try await api.download(Route.status(404).path, to: destination)
                        Issue.record("a 404 download succeeded")
                    } catch let error as ResponseSerializationError {
                        #expect(error.refusedStatus == 404)
                        #expect(error.body.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("404") == true)
                    }
                    try DownloadFixture.expectUntouched(directory, destination, existing: existing)
                }
            }
        }
    }

    @Test("a download that succeeds replaces the file", arguments: BackendConfiguration.allCases)
    func success(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            try await DownloadFixture.withDestination { directory, destination in
                let response = try await api.download(Route.bytes(200_000).path, to: destination)
                #expect(response.fileURL == destination)
                #expect(try Data(contentsOf: destination) == Data(TestServer.expectedBody(count: 200_000)))
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["body.bin"])
            }
        }
    }

    @Test("cancelling the task mid-body keeps the user's file", arguments: BackendConfiguration.allCases)
    func cancelMidBody(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend) { api in
            try await DownloadFixture.withDestination { directory, destination in
                let received = Locked<Int64>(0)
                // The head and 10 of 1,000 bytes, then silence: the body is under way until cancelled.
                let path = server.faultURL(.stallBody).absoluteString
                let task = Task {
                    try await api.download(path, to: destination, progress: { received.set($0.bytesReceived) })
                }
                #expect(await waitUntil { received.value > 0 }, "no body byte arrived")
                task.cancel()
                let result = await task.result
                guard case .failure(let error as TransferError) = result, error.code == .cancelled else {
                    Issue.record("expected a cancellation: \(result)")
                    return
                }
                // A cancelled task returns at once; the operation finishes (and removes its files) after.
                #expect(await waitUntil { api.operationQueue.operationCount == 0 }, "the operation never finished")
                try DownloadFixture.expectUntouched(directory, destination)
            }
        }
    }

    @Test("a connection closed mid-body keeps the user's file", arguments: BackendConfiguration.allCases)
    func brokenMidBody(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            try await DownloadFixture.withDestination { directory, destination in
                await #expect(throws: TransferError.self) {
                    try await api.download(Route.closeMidBody(bytes: 1 << 20).path, to: destination)
                }
                try DownloadFixture.expectUntouched(directory, destination)
            }
        }
    }

    @Test("the stub writes a kept status's body to the file and leaves it for an error status")
    func stub() async throws {
        let stub = StubTransport()
        stub.respond(to: "/file", with: .text("contents"))
        stub.respond(to: "/missing", with: .text("no such file", status: 404))
        let api = RequestOperationManager(baseURL: URL(string: "https://api.example.com/"), transport: stub)
        try await DownloadFixture.withDestination { directory, destination in
            await #expect(throws: ResponseSerializationError.self) { try await api.download("missing", to: destination) }
            try DownloadFixture.expectUntouched(directory, destination)
            let response = try await api.download("file", to: destination)
            #expect(response.fileURL == destination)
            #expect(try String(contentsOf: destination, encoding: .utf8) == "contents")
        }
        await api.shutdown()
    }
}
