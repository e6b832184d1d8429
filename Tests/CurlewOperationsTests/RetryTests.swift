import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// Retries and interceptors on `RequestOperation`: each attempt a new transfer, the operation
/// executing throughout, one finish; a cancel while the request is adapted or during a backoff wait
/// finishes it at once; interceptors never run on the network context.
@Suite("RequestOperation: retries and interceptors")
struct OperationRetryTests {
    @Test("a 503 twice, then success: one finish, three attempts", arguments: BackendConfiguration.allCases)
    func retriesUntilSuccess(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("op-503", backend)
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let operation = RequestOperation(request: TransferRequest(url: server.url(.flaky(key: key, failures: 2))), engine: engine)
            operation.retryPolicy = .quickForTests
            let probe = OperationProbe(operation)
            operation.start()
            let record = await probe.expectFinishedOnce()
            #expect(record.successes == 1)
            #expect(operation.attemptCount == 3)
            #expect(operation.response?.head.status == .ok)
            #expect(operation.response?.metrics.retryCount == 2)
            #expect(server.requests(forKey: key) == 3)
            #expect(record.notifications.filter { $0 == RequestOperation.didStartNotification }.count == 1)
        }
    }

    @Test("cancelling during the backoff wait finishes at once, once", arguments: BackendConfiguration.allCases)
    func cancelDuringWait(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("op-wait", backend)
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let request = TransferRequest(url: server.url(.flaky(key: key, failures: 1, status: 503, retryAfter: "30")))
            let operation = RequestOperation(request: request, engine: engine)
            operation.retryPolicy = .default
            let probe = OperationProbe(operation)
            operation.start()
            #expect(await waitUntil { operation.isWaitingForRetry })
            #expect(server.requests(forKey: key) == 1 && operation.attemptCount == 1)
            let cancelled = ContinuousClock.now
            operation.cancel()
            await probe.expectFinishedOnce()
            #expect(ContinuousClock.now - cancelled < .seconds(10), "the cancel waited for the backoff")
            #expect(probe.cancellation != nil, "\(String(describing: probe.record.value.error))")
            #expect(operation.isFinished && operation.isCancelled)
            #expect(await holdsThroughout(.milliseconds(200)) { server.requests(forKey: key) == 1 })
        }
    }

    @Test("a retried file body is read again from its start", arguments: BackendConfiguration.allCases)
    func streamedBodyReopened(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("op-body", backend)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-op-retry-\(UUID().uuidString)")
        let bytes = Data(TestServer.expectedBody(count: 300_000, offset: 5))
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let request = TransferRequest(url: server.url(.flaky(key: key, failures: 2)), method: .put, body: .file(file))
            let operation = RequestOperation(request: request, engine: engine)
            operation.retryPolicy = .quickForTests
            let probe = OperationProbe(operation)
            operation.start()
            let record = await probe.expectFinishedOnce()
            #expect(record.successes == 1)
            let echo = try JSONDecoder().decode(EchoReply.self, from: try #require(operation.responseData))
            #expect(echo.bodyLength == bytes.count)
            #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(bytes)))
            #expect(server.requests(forKey: key) == 3)
            #expect(operation.response?.metrics.retryCount == 2)
        }
    }

    @Test("an interceptor refreshes a bearer token once on 401", arguments: BackendConfiguration.allCases)
    func refreshesTokenOn401(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let interceptor = BearerInterceptor(scheduler: engine.scheduler)
            let operation = RequestOperation(request: TransferRequest(url: server.url(.bearer(token: "fresh"))), engine: engine)
            operation.interceptor = interceptor
            let probe = OperationProbe(operation)
            operation.start()
            let record = await probe.expectFinishedOnce()
            #expect(record.successes == 1)
            #expect(operation.response?.head.status == .ok)
            #expect(operation.responseData == Data("authorized\n".utf8))
            #expect(operation.attemptCount == 2)
            #expect(interceptor.adapted.value == 2)
            #expect(!interceptor.ranOnContext.value, "an interceptor ran on the network context")
        }
    }

    struct FailingAdapter: RequestInterceptor {
        struct Refused: Error {}
        func adapt(_ request: TransferRequest, attempt: Int) async throws -> TransferRequest { throw Refused() }
    }

    /// Waits until cancelled (then throws): an adapter that takes for ever.
    struct StuckAdapter: RequestInterceptor {
        let entered: Locked<Bool>
        func adapt(_ request: TransferRequest, attempt: Int) async throws -> TransferRequest {
            self.entered.set(true)
            while !Task.isCancelled { try await Task.sleep(for: .milliseconds(5)) }
            throw CancellationError()
        }
    }

    @Test("an adapter that throws fails the operation once; one that hangs is cancelled at once",
          arguments: BackendConfiguration.allCases)
    func adapterFailures(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let failing = RequestOperation(request: TransferRequest(url: server.url(.bytes(10))), engine: engine)
            failing.interceptor = FailingAdapter()
            let failingProbe = OperationProbe(failing)
            failing.start()
            let record = await failingProbe.expectFinishedOnce()
            #expect(record.error is FailingAdapter.Refused)
            #expect(failing.attemptCount == 0)

            let entered = Locked(false)
            let stuck = RequestOperation(request: TransferRequest(url: server.url(.bytes(10))), engine: engine)
            stuck.interceptor = StuckAdapter(entered: entered)
            let stuckProbe = OperationProbe(stuck)
            stuck.start()
            #expect(await waitUntil { entered.value })
            stuck.cancel()
            await stuckProbe.expectFinishedOnce()
            #expect(stuckProbe.cancellation != nil)
            #expect(stuck.attemptCount == 0)
        }
    }

    @Test("a retry the budget refuses is not made; an interceptor's own retry does not draw on it",
          arguments: BackendConfiguration.allCases)
    func budget(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let empty = RetryBudget(retryRatio: 0, minimumRetries: 0)
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let key = uniqueKey("op-budget", backend)
            let refused = RequestOperation(request: TransferRequest(url: server.url(.flaky(key: key, failures: 1))), engine: engine)
            refused.retryPolicy = .quickForTests
            refused.retryBudget = empty
            let refusedProbe = OperationProbe(refused)
            refused.start()
            let record = await refusedProbe.expectFinishedOnce()
            #expect(record.successes == 1, "the attempt's response is the result")
            #expect(refused.response?.head.status.code == 503)
            #expect(refused.attemptCount == 1)
            #expect(server.requests(forKey: key) == 1)

            let interceptor = BearerInterceptor(scheduler: engine.scheduler)
            let refreshed = RequestOperation(request: TransferRequest(url: server.url(.bearer(token: "fresh"))), engine: engine)
            refreshed.interceptor = interceptor
            refreshed.retryPolicy = .quickForTests
            refreshed.retryBudget = empty
            let refreshedProbe = OperationProbe(refreshed)
            refreshed.start()
            #expect(await refreshedProbe.expectFinishedOnce().successes == 1)
            #expect(refreshed.response?.head.status == .ok && refreshed.attemptCount == 2)
        }
    }
}
