import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// The manager's retry policy and interceptor reach every request it sends — AFNetworking style and
/// async — on every backend: retried attempts, a file body sent whole each time, a token refreshed
/// on 401, and a cancel during a backoff wait that ends the request at once, once.
@Suite("RequestOperationManager: retries and interceptors")
struct ManagerRetryTests {
    @Test("a 503 twice, then the value: three attempts, async and AFNetworking style", arguments: BackendConfiguration.allCases)
    func retriesUntilSuccess(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend) { api in
            #expect(api.retryPolicy == .none)
            api.retryPolicy = .quickForTests

            let asyncKey = uniqueKey("manager-async", backend)
            let task = api.dataTask(.get, Route.flaky(key: asyncKey, failures: 2).path, as: EchoReply.self)
            let reply = try await task.response
            #expect(reply.value.method == "GET")
            #expect(reply.metrics.retryCount == 2)
            #expect(task.attemptCount == 3)
            #expect(server.requests(forKey: asyncKey) == 3)

            let styleKey = uniqueKey("manager-style", backend)
            let probe = HandlerProbe()
            let operation = api.GET(Route.flaky(key: styleKey, failures: 2).path, success: probe.success, failure: probe.failure)
            let record = await probe.waitForOneCall()
            #expect(record.successes == 1, "\(String(describing: record.error))")
            #expect(operation?.attemptCount == 3)
            #expect(server.requests(forKey: styleKey) == 3)
        }
    }

    @Test("the default is no retry, and a POST is not retried by the default policy", arguments: BackendConfiguration.allCases)
    func noRetryByDefault(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend) { api in
            let plainKey = uniqueKey("manager-plain", backend)
            let error = await #expect(throws: ResponseSerializationError.self) {
                _ = try await api.get(Route.flaky(key: plainKey, failures: 1).path, as: Data.self)
            }
            #expect(error?.response.status.code == 503)
            #expect(server.requests(forKey: plainKey) == 1)

            api.retryPolicy = RetryPolicy(initialBackoff: .milliseconds(5))
            let postKey = uniqueKey("manager-post", backend)
            await #expect(throws: ResponseSerializationError.self) {
                _ = try await api.post(Route.flaky(key: postKey, failures: 1).path, as: Data.self)
            }
            #expect(server.requests(forKey: postKey) == 1)
        }
    }

    @Test("a retried file body is sent whole each time", arguments: BackendConfiguration.allCases)
    func streamedBodyReopened(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-manager-retry-\(UUID().uuidString)")
        let bytes = Data(TestServer.expectedBody(count: 300_000, offset: 7))
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withManager(backend) { api in
            api.retryPolicy = .quickForTests
            let key = uniqueKey("manager-body", backend)
            var request = try api.request(.put, Route.flaky(key: key, failures: 2).path)
            request.body = .file(file)
            let echo = try await api.value(for: request, as: EchoReply.self)
            #expect(echo.bodyLength == bytes.count)
            #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(bytes)))
            #expect(server.requests(forKey: key) == 3)
        }
    }

    @Test("the manager's interceptor refreshes a bearer token once on 401", arguments: BackendConfiguration.allCases)
    func interceptorRefreshesToken(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            let engine = try #require(api.engine)
            let interceptor = BearerInterceptor(scheduler: engine.scheduler)
            api.interceptor = interceptor
            let (body, response) = try await api.data(.get, Route.bearer(token: "fresh").path)
            #expect(body == Data("authorized\n".utf8))
            #expect(response.metrics.retryCount == 1)
            #expect(interceptor.refreshes.value == 1)
            #expect(!interceptor.ranOnContext.value, "an interceptor ran on the network context")
        }
    }

    @Test("cancelling the awaiting task during a backoff wait ends the request at once, once",
          arguments: BackendConfiguration.allCases)
    func cancelDuringWait(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend) { api in
            api.retryPolicy = .default
            let key = uniqueKey("manager-wait", backend)
            let request = api.dataTask(.get, Route.flaky(key: key, failures: 1, status: 503, retryAfter: "30").path, as: Data.self)
            let waiter = Task { try await request.value }
            #expect(await waitUntil { request.state == .waitingForRetry }, "the request never waited to retry")
            let cancelled = ContinuousClock.now
            waiter.cancel()
            let result = await waiter.result
            #expect(ContinuousClock.now - cancelled < .seconds(10), "the cancel waited for the backoff")
            #expect((result.failure as? TransferError)?.code == .cancelled, "\(result)")
            #expect(await waitUntil { request.isFinished } && request.attemptCount == 1)
            #expect(await holdsThroughout(.milliseconds(200)) { server.requests(forKey: key) == 1 })
        }
    }

    @Test("shutting the manager down during a backoff wait finishes the request at once", arguments: BackendConfiguration.allCases)
    func shutdownDuringWait(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend) { api in
            api.retryPolicy = .default
            let key = uniqueKey("manager-shutdown", backend)
            let probe = HandlerProbe()
            let path = Route.flaky(key: key, failures: 1, status: 503, retryAfter: "30").path
            let operation = try #require(api.GET(path, success: probe.success, failure: probe.failure))
            #expect(await waitUntil { operation.isWaitingForRetry }, "the request never waited to retry")
            let started = ContinuousClock.now
            await api.shutdown()
            #expect(ContinuousClock.now - started < .seconds(10), "shutdown waited for the backoff")
            let record = await probe.waitForOneCall()
            #expect((record.error as? TransferError)?.code == .cancelled)
            #expect(await holdsThroughout(.milliseconds(200)) { server.requests(forKey: key) == 1 })
        }
    }
}

extension Result {
    /// The failure, if any.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
