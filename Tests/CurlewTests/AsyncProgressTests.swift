import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// Upload and download progress for async callers: `RequestTask.progress` and `upload(…, progress:)`,
/// on every backend.
@Suite("RequestOperationManager: progress for async callers")
struct AsyncProgressTests {
    @Test("task.progress: the download's counts up to the whole body, then the end", arguments: BackendConfiguration.allCases)
    func downloadProgress(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            let task = api.dataTask(.get, Route.bytes(1_000_000).path, as: Data.self)
            var seen: [Int64] = []
            for await progress in task.progress { seen.append(progress.bytesReceived) }
            #expect(seen.last == 1_000_000, "\(seen.suffix(3))")
            #expect(seen == seen.sorted(), "counts only grow within an attempt")
            let data = try await task.value
            #expect(data.count == 1_000_000)
        }
    }

    @Test("task.progress of a request body; a stream made after the end gives the last value and ends",
          arguments: BackendConfiguration.allCases)
    func uploadProgress(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            var request = try api.request(.post, "echo")
            request.body = .data(Data(repeating: 0x5A, count: 300_000))
            let task = api.task(for: request, as: Echo.self)
            let early = task.progress
            let echo = try await task.value
            #expect(echo.bodyLength == 300_000)
            var last: TransferProgress?
            for await progress in early { last = progress }
            #expect(last?.bytesSent == 300_000)

            var late: [TransferProgress] = []
            for await progress in task.progress { late.append(progress) }
            #expect(late.count == 1 && late.first?.bytesSent == 300_000)
        }
    }

    @Test("upload(…, progress:) reports the bytes sent, all of them before it returns", arguments: BackendConfiguration.allCases)
    func uploadHandler(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            let chunks = AsyncStream<Data> { continuation in
                for _ in 0..<8 { continuation.yield(Data(repeating: 0x41, count: 32_768)) }
                continuation.finish()
            }
            let sent = Locked<Int64>(0)
            let echo = try await api.upload(chunks, to: "echo", as: Echo.self, progress: { progress in
                sent.withLock { $0 = max($0, progress.bytesSent) }
            })
            #expect(echo.bodyLength == 8 * 32_768)
            #expect(sent.value == 8 * 32_768)
        }
    }
}
