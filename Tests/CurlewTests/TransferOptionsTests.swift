import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// Per-request options through the manager: rate limits both ways, on every backend.
@Suite("RequestOperationManager: per-request options")
struct TransferOptionsTests {
    /// The limits only make a transfer slower, so a lower bound on its time holds however fast or
    /// slow the machine is (curl averages over the transfer and may send or take a first buffer at
    /// once, so the bound leaves room for that).
    @Test("download and upload rate limits hold a transfer to its rate", arguments: BackendConfiguration.allCases)
    func rateLimits(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            var download = try api.request(.get, Route.bytes(131_072).path)
            download.options.maximumDownloadBytesPerSecond = 65_536
            var started = ContinuousClock.now
            let data = try await api.value(for: download, as: Data.self)
            #expect(data.count == 131_072)
            #expect(ContinuousClock.now - started >= .seconds(1), "128 KiB at 64 KiB/s")

            var upload = try api.request(.post, "echo")
            let body = Data(TestServer.expectedBody(count: 262_144))
            upload.body = .data(body)
            upload.options.maximumUploadBytesPerSecond = 131_072
            started = ContinuousClock.now
            let echo = try await api.value(for: upload, as: Echo.self)
            #expect(echo.bodyLength == body.count)
            #expect(ContinuousClock.now - started >= .seconds(1), "256 KiB at 128 KiB/s")
        }
    }
}
