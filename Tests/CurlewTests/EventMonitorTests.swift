import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// A manager's event monitors hear each request's events in order — both dialects, retries,
/// interceptors, streamed bodies, cancellation — on every backend.
@Suite("RequestOperationManager: event monitors")
struct EventMonitorTests {
    @Test("an async request: began, the attempt's start, head, progress and end, then finished", arguments: BackendConfiguration.allCases)
    func asyncRequest(_ backend: BackendConfiguration) async throws {
        let monitor = RecordingMonitor()
        let other = RecordingMonitor()
        try await withObservedManager(backend, monitors: [monitor, other]) { api, _ in
            _ = try await api.get(Route.bytes(100_000).path, as: Data.self)
            let id = try #require(monitor.requests.first)
            #expect(monitor.events(id).first == .began(.async))
            #expect(monitor.events(id).contains(.progress(attempt: 1)))
            #expect(monitor.milestones(id) == [
                .began(.async), .started(attempt: 1), .head(attempt: 1, status: 200),
                .completed(attempt: 1, status: 200, error: nil), .finished(status: 200, error: nil),
            ])
            #expect(other.milestones(id) == monitor.milestones(id), "every monitor hears every event")

            await #expect(throws: ResponseSerializationError.self) { _ = try await api.data(.get, "status/404") }
            let refused = try #require(monitor.requests.last)
            #expect(monitor.milestones(refused).last == .finished(status: 404, error: "ResponseSerializationError"),
                    "the request finishes with what the caller got")
        }
    }

    @Test("a retried request: the retry's reason and wait, then the next attempt", arguments: BackendConfiguration.allCases)
    func retriedRequest(_ backend: BackendConfiguration) async throws {
        let monitor = RecordingMonitor()
        try await withObservedManager(backend, monitors: [monitor]) { api, _ in
            api.retryPolicy = .quickForTests(maximumAttempts: 3)
            _ = try await api.get(Route.flaky(key: uniqueKey("monitor-retry", backend), failures: 1).path, as: Echo.self)
            #expect(monitor.onlyRequest == [
                .began(.async),
                .started(attempt: 1), .head(attempt: 1, status: 503), .completed(attempt: 1, status: 503, error: nil),
                .retry(after: 1, decidedBy: .retryPolicy, status: 503),
                .started(attempt: 2), .head(attempt: 2, status: 200), .completed(attempt: 2, status: 200, error: nil),
                .finished(status: 200, error: nil),
            ])
            #expect(monitor.waits.value.count == 1 && monitor.waits.value.allSatisfy { $0 > .zero && $0 <= .milliseconds(20) })
        }
    }

    @Test("an interceptor's adaptation and retry are reported before each attempt", arguments: BackendConfiguration.allCases)
    func interceptor(_ backend: BackendConfiguration) async throws {
        let monitor = RecordingMonitor()
        try await withObservedManager(backend, monitors: [monitor]) { api, _ in
            api.interceptor = RetryOnceInterceptor()
            _ = try await api.get("echo", as: Echo.self)
            #expect(monitor.onlyRequest == [
                .began(.async),
                .adapted(attempt: 1), .started(attempt: 1), .head(attempt: 1, status: 200), .completed(attempt: 1, status: 200, error: nil),
                .retry(after: 1, decidedBy: .interceptor, status: 200),
                .adapted(attempt: 2), .started(attempt: 2), .head(attempt: 2, status: 200), .completed(attempt: 2, status: 200, error: nil),
                .finished(status: 200, error: nil),
            ])
            let heads = try #require(monitor.sentHeads.value.values.first)
            #expect(heads.map { $0.headerFields[HTTPField.Name("X-Attempt")!] } == ["1", "2"], "the attempts' heads are the adapted ones")
        }
    }

    @Test("an operation reports its attempts through the transport, and finishes before its handler runs",
          arguments: BackendConfiguration.allCases)
    func operation(_ backend: BackendConfiguration) async throws {
        let monitor = RecordingMonitor()
        try await withObservedManager(backend, monitors: [monitor]) { api, _ in
            api.retryPolicy = .quickForTests(maximumAttempts: 3)
            let probe = HandlerProbe()
            let finishedBeforeHandler = Locked(false)
            api.GET(Route.flaky(key: uniqueKey("monitor-operation", backend), failures: 1).path, success: { operation, object in
                finishedBeforeHandler.set(monitor.finishedCount == 1)
                probe.success(operation, object)
            }, failure: probe.failure)
            let record = await probe.waitForOneCall()
            #expect(record.successes == 1)
            #expect(finishedBeforeHandler.value)
            #expect(monitor.onlyRequest == [
                .began(.operation),
                .started(attempt: 1), .head(attempt: 1, status: 503), .completed(attempt: 1, status: 503, error: nil),
                .started(attempt: 2), .head(attempt: 2, status: 200), .completed(attempt: 2, status: 200, error: nil),
                .finished(status: 200, error: nil),
            ])
        }
    }

    @Test("a streamed response finishes when its body ends, not when its head arrives", arguments: BackendConfiguration.allCases)
    func streamed(_ backend: BackendConfiguration) async throws {
        let monitor = RecordingMonitor()
        try await withObservedManager(backend, monitors: [monitor]) { api, _ in
            // 1 MB through a 16 KiB buffer: the transfer cannot end before the body is read.
            let response = try await api.stream(.get, Route.bytes(1_000_000).path, bufferSize: 16 << 10)
            let id = try #require(monitor.requests.first)
            #expect(monitor.milestones(id) == [.began(.streaming), .started(attempt: 1), .head(attempt: 1, status: 200)])
            var count = 0
            for try await chunk in response.body { count += chunk.count }
            #expect(count == 1_000_000)
            #expect(await waitUntil { monitor.finishedCount == 1 })
            #expect(monitor.milestones(id).suffix(2) == [.completed(attempt: 1, status: 200, error: nil), .finished(status: 200, error: nil)])
        }
    }

    @Test("a cancelled request completes its attempt and finishes once, with the cancellation", arguments: BackendConfiguration.allCases)
    func cancelled(_ backend: BackendConfiguration) async throws {
        let monitor = RecordingMonitor()
        try await withObservedManager(backend, monitors: [monitor]) { api, _ in
            let task = api.dataTask(.get, Route.delay(120_000).path, as: Data.self)
            #expect(await waitUntil { monitor.requests.first.map { monitor.milestones($0).contains(.started(attempt: 1)) } ?? false })
            task.cancel()
            await #expect(throws: TransferError.self) { _ = try await task.value }
            #expect(await waitUntil { monitor.finishedCount == 1 })
            #expect(monitor.onlyRequest == [
                .began(.async), .started(attempt: 1), .completed(attempt: 1, status: nil, error: .cancelled),
                .finished(status: nil, error: "cancelled"),
            ])
        }
    }

    @Test("with nothing observing, operations run straight on the engine; a monitor puts its dispatch in between",
          arguments: BackendConfiguration.allCases)
    func nothingObserving(_ backend: BackendConfiguration) async throws {
        try await withObservedManager(backend) { api, engine in
            let operation = api.operation(with: try api.request(.get, "echo"), success: nil, failure: nil)
            #expect(operation.engine === engine)
        }
        try await withObservedManager(backend, monitors: [RecordingMonitor()]) { api, _ in
            let operation = api.operation(with: try api.request(.get, "echo"), success: nil, failure: nil)
            #expect(operation.engine == nil)
        }
    }
}

/// Numbers each attempt in a header, and asks for one retry after the first attempt.
private struct RetryOnceInterceptor: RequestInterceptor {
    func adapt(_ request: TransferRequest, attempt: Int) async throws -> TransferRequest {
        var request = request
        try request.setHeaderField("X-Attempt", value: "\(attempt)")
        return request
    }

    func retry(_ request: TransferRequest, after outcome: Result<TransferResponse, TransferError>, attempt: Int) async -> RetryDecision {
        attempt == 1 ? .retry(after: .zero) : .doNotRetry
    }
}
