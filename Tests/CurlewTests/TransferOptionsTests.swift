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
            // libcurl 7.88 reads whatever the socket holds in one go (up to 100 buffers of 16 KiB)
            // before it looks at the rate, so a small body that is already there arrives at once:
            // 8 MiB at 2 MiB/s leaves at least 6 MiB to be held back, 3 s.
            var download = try api.request(.get, Route.bytes(8 << 20).path)
            download.options.maximumDownloadBytesPerSecond = 2 << 20
            var upload = try api.request(.post, "echo")
            let body = Data(TestServer.expectedBody(count: 262_144))
            upload.body = .data(body)
            upload.options.maximumUploadBytesPerSecond = 131_072

            let started = ContinuousClock.now
            async let downloaded = Self.timed { try await api.value(for: download, as: Data.self) }
            async let uploaded = Self.timed { try await api.value(for: upload, as: Echo.self) }
            let (data, downloadEnd) = try await downloaded
            let (echo, uploadEnd) = try await uploaded
            #expect(data.count == 8 << 20)
            #expect(downloadEnd - started >= .seconds(2), "8 MiB at 2 MiB/s")
            #expect(echo.bodyLength == body.count)
            #expect(uploadEnd - started >= .seconds(1), "256 KiB at 128 KiB/s")
        }
    }

    /// The value of `body` and when it returned.
    static func timed<Value: Sendable>(_ body: () async throws -> Value) async throws -> (Value, ContinuousClock.Instant) {
        let value = try await body()
        return (value, ContinuousClock.now)
    }
}
