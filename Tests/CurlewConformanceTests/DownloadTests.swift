import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

@Suite("Downloads")
struct DownloadTests {
    static let size = 16 << 20

    @Test("16 MiB to memory, progress monotonic and ending at the total", arguments: BackendConfiguration.allCases)
    func toMemory(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let (result, recorder) = try await engine.run(try .get(.bytes(Self.size)))
            let response = try result.get()
            #expect(response.body == Data(TestServer.expectedBody(count: Self.size)))
            let progress = recorder.events.value.progress
            let received = progress.map(\.bytesReceived)
            #expect(received == received.sorted(), "download progress went backwards")
            #expect(received.last == Int64(Self.size))
            #expect(progress.allSatisfy { $0.expectedBytesToReceive == Int64(Self.size) })
        }
    }

    @Test("16 MiB streamed to a file, no temporary left", arguments: BackendConfiguration.allCases)
    func toFile(_ backend: BackendConfiguration) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-dl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("body.bin")
        try await withEngine(backend) { engine in
            var request = try TransferRequest.get(.bytes(Self.size, chunked: true))
            request.destination = .file(destination)
            let response = try await engine.fetch(request)
            #expect(response.fileURL == destination)
            #expect(response.body == nil)
            #expect(try Data(contentsOf: destination) == Data(TestServer.expectedBody(count: Self.size)))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["body.bin"])
        }
    }

    @Test("a failed download leaves no file", arguments: BackendConfiguration.allCases)
    func failedDownloadLeavesNoFile(_ backend: BackendConfiguration) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-dl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withEngine(backend) { engine in
            var request = try TransferRequest.get(.closeMidBody(bytes: 1 << 20))
            request.destination = .file(directory.appendingPathComponent("body.bin"))
            #expect(try await engine.failure(request).code == .networkConnectionLost)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    @Test("an unwritable destination fails with cannotWriteToFile", arguments: BackendConfiguration.allCases)
    func unwritableDestination(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            var request = try TransferRequest.get(.bytes(10))
            request.destination = .file(URL(fileURLWithPath: "/nonexistent-dir/body.bin"))
            #expect(try await engine.failure(request).code == .cannotWriteToFile)
        }
    }
}
