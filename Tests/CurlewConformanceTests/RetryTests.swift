import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// `TransferEngine.execute(_:retry:)`: what is retried, how often, after how long; a streamed body is
/// sent whole again; a cancel during the wait ends it at once.
@Suite("Retries on the engine")
struct RetryTests {
    @Test("a 503 twice, then success: three attempts", arguments: BackendConfiguration.allCases)
    func recoversAfterServiceUnavailable(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("503", backend)
        try await withEngine(backend) { engine in
            let response = try await engine.execute(TransferRequest(url: server.url(.flaky(key: key, failures: 2))), retry: .quickForTests)
            #expect(response.head.status == .ok)
            #expect(response.metrics.retryCount == 2)
            #expect(server.requests(forKey: key) == 3)
        }
    }

    @Test("attempts run out: the last response is the result", arguments: BackendConfiguration.allCases)
    func attemptsRunOut(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("502", backend)
        try await withEngine(backend) { engine in
            let request = TransferRequest(url: server.url(.flaky(key: key, failures: 100, status: 502)))
            let response = try await engine.execute(request, retry: .quickForTests)
            #expect(response.head.status == .badGateway)
            #expect(response.metrics.retryCount == 3)
            #expect(server.requests(forKey: key) == 4)
        }
    }

    @Test("a POST is not retried by default", arguments: BackendConfiguration.allCases)
    func postNotRetried(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("post", backend)
        try await withEngine(backend) { engine in
            let post = TransferRequest(url: server.url(.flaky(key: key, failures: 1)), method: .post, body: .data(Data("x".utf8)))
            let response = try await engine.execute(post, retry: .quickForTests)
            #expect(response.head.status == .serviceUnavailable)
            #expect(server.requests(forKey: key) == 1)
        }
    }

    /// Each on a new engine: libcurl itself sends a request again, once, when a *reused* connection
    /// turns out dead before any response byte; on a new connection the reset is the attempt's end.
    @Test("a reset before any byte is retried for a GET", arguments: BackendConfiguration.allCases)
    func resetRetried(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let resetKey = uniqueKey("reset", backend)
        try await withEngine(backend) { engine in
            let reset = TransferRequest(url: server.url(.flaky(key: resetKey, failures: 1, status: 0)))
            let response = try await engine.execute(reset, retry: .quickForTests)
            #expect(response.head.status == .ok)
            #expect(response.metrics.retryCount == 1)
            #expect(server.requests(forKey: resetKey) == 2)
        }
        try await withEngine(backend) { engine in
            // Without a policy the same reset is the failure.
            let once = TransferRequest(url: server.url(.flaky(key: uniqueKey("reset-once", backend), failures: 1, status: 0)))
            let error = try await #require(throws: TransferError.self) { try await engine.execute(once, retry: .none) }
            #expect(error.code == .networkConnectionLost)
            #expect(!error.responseStarted)
        }
    }

    @Test("a retried streamed body is read again from its start", arguments: BackendConfiguration.allCases)
    func streamedBodyReopened(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("body", backend)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-retry-\(UUID().uuidString)")
        let bytes = Data(TestServer.expectedBody(count: 300_000, offset: 3))
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withEngine(backend) { engine in
            let request = TransferRequest(url: server.url(.flaky(key: key, failures: 2)), method: .put, body: .file(file))
            let response = try await engine.execute(request, retry: .quickForTests)
            let echo = try EchoReply(response)
            #expect(echo.bodyLength == bytes.count)
            #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(bytes)))
            #expect(server.requests(forKey: key) == 3)
        }
    }

    @Test("Retry-After is waited for", arguments: BackendConfiguration.allCases)
    func retryAfterHonoured(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("retry-after", backend)
        try await withEngine(backend) { engine in
            let start = ContinuousClock.now
            let request = TransferRequest(url: server.url(.flaky(key: key, failures: 1, status: 429, retryAfter: "1")))
            let response = try await engine.execute(request, retry: .quickForTests)
            #expect(response.head.status == .ok)
            #expect(ContinuousClock.now - start >= .milliseconds(950), "the retry came before Retry-After")
        }
    }

    @Test("cancelling during the wait ends it at once, with one cancellation", arguments: BackendConfiguration.allCases)
    func cancelDuringBackoff(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("cancel", backend)
        try await withEngine(backend) { engine in
            let request = TransferRequest(url: server.url(.flaky(key: key, failures: 1, status: 503, retryAfter: "30")))
            let task = Task { try await engine.execute(request, retry: .default) }
            #expect(await waitUntil { server.requests(forKey: key) == 1 })
            let cancelled = ContinuousClock.now
            task.cancel()
            let result = await task.result
            #expect(ContinuousClock.now - cancelled < .seconds(10), "the wait outlived the cancel")
            let error = result.failureValue as? TransferError
            #expect(error?.code == .cancelled, "\(result)")
            #expect(await holdsThroughout(.milliseconds(200)) { server.requests(forKey: key) == 1 })
        }
    }
}

extension Result {
    /// The failure, if any.
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
