import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import InMemoryTracing
import Testing
import Tracing

/// Distributed tracing of a manager's requests: one client span per request with OpenTelemetry's
/// HTTP attributes, its context in each attempt's `traceparent`, on every backend.
@Suite("RequestOperationManager: distributed tracing")
struct TracingTests {
    /// The `traceparent` the server received.
    static func traceparent(_ echo: Echo) -> String? {
        echo.headerValues("traceparent").first
    }

    @Test("a client span with OpenTelemetry's attributes, no secret in url.full, its context in traceparent",
          arguments: BackendConfiguration.allCases)
    func clientSpan(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let tracer = W3CTestTracer()
        try await withObservedManager(backend, tracer: tracer) { api, _ in
            let echo = try await api.get("echo", parameters: ["page": "2", "access_token": "s3cret-never-traced"], as: Echo.self)
            let span = try #require(tracer.finishedSpans.first)
            #expect(tracer.finishedSpans.count == 1 && tracer.activeSpans.isEmpty)
            #expect(span.operationName == "GET")
            #expect(span.kind == .client)
            #expect(Self.traceparent(echo) == W3CTestTracer.traceparent(traceID: span.traceID, spanID: span.spanID))

            let attributes = span.attributes
            #expect(attributes.get("http.request.method") == .string("GET"))
            #expect(attributes.get("url.full") == .string("http://127.0.0.1:\(server.port)/echo?access_token=REDACTED&page=2"))
            #expect(attributes.get("server.address") == .string("127.0.0.1"))
            #expect(attributes.get("server.port") == .int64(Int64(server.port)))
            #expect(attributes.get("http.response.status_code") == .int64(200))
            #expect(attributes.get("network.protocol.version") == .string("1.1"))
            #expect(attributes.get("network.peer.address") == .string("127.0.0.1"))
            #expect(attributes.get("http.request.resend_count") == nil, "set only when the request was sent again")
            #expect(attributes.get("error.type") == nil)
            for timing in ["name_lookup", "connect", "tls_handshake", "first_byte", "total"] {
                #expect(attributes.get("curlew.timing.\(timing)") != nil, "\(timing)")
            }
            #expect(span.status?.code != .error)
            #expect(span.events.map(\.name) == ["curlew.attempt"])
            let everything = "\(attributes)" + span.events.map { "\($0.attributes)" }.joined()
            #expect(!everything.contains("s3cret-never-traced"))
        }
    }

    @Test("a retried request: one span, an event per attempt and per retry, the resend count", arguments: BackendConfiguration.allCases)
    func retried(_ backend: BackendConfiguration) async throws {
        let tracer = W3CTestTracer()
        try await withObservedManager(backend, tracer: tracer) { api, _ in
            api.retryPolicy = .quickForTests(maximumAttempts: 3)
            let echo = try await api.get(Route.flaky(key: uniqueKey("tracing-retry", backend), failures: 1).path, as: Echo.self)
            #expect(tracer.finishedSpans.count == 1)
            let span = try #require(tracer.finishedSpans.first)
            #expect(Self.traceparent(echo) == W3CTestTracer.traceparent(traceID: span.traceID, spanID: span.spanID),
                    "the retry carries the request's span")
            #expect(span.attributes.get("http.request.resend_count") == .int64(1))
            #expect(span.attributes.get("http.response.status_code") == .int64(200))
            #expect(span.attributes.get("error.type") == nil)
            #expect(span.events.map(\.name) == ["curlew.attempt", "curlew.retry", "curlew.attempt"])
            #expect(span.events[0].attributes.get("http.response.status_code") == .int64(503))
            #expect(span.events[0].attributes.get("error.type") == .string("503"))
            #expect(span.events[1].attributes.get("curlew.retry.decided_by") == .string("retry_policy"))
            #expect(span.events[2].attributes.get("http.request.resend_count") == .int64(1))
        }
    }

    @Test("a cancelled request: its span ends with error.type cancelled", arguments: BackendConfiguration.allCases)
    func cancelled(_ backend: BackendConfiguration) async throws {
        let tracer = W3CTestTracer()
        try await withObservedManager(backend, tracer: tracer) { api, _ in
            let task = api.dataTask(.get, Route.delay(120_000).path, as: Data.self)
            #expect(await waitUntil { task.attemptCount == 1 })
            task.cancel()
            await #expect(throws: TransferError.self) { _ = try await task.value }
            let span = try #require(tracer.finishedSpans.first)
            #expect(tracer.activeSpans.isEmpty)
            #expect(span.attributes.get("error.type") == .string("cancelled"))
            #expect(span.status?.code == .error)
            #expect(span.errors.count == 1)
        }
    }

    @Test("an error status: error.type is the status; a failed connection: its code", arguments: BackendConfiguration.allCases)
    func failures(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let tracer = W3CTestTracer()
        try await withObservedManager(backend, tracer: tracer) { api, _ in
            await #expect(throws: ResponseSerializationError.self) { _ = try await api.data(.get, "status/404") }
            await #expect(throws: TransferError.self) { _ = try await api.get(server.refusedURL.absoluteString, as: Echo.self) }
            let spans = tracer.finishedSpans
            #expect(spans.count == 2)
            #expect(spans.first?.attributes.get("error.type") == .string("404"))
            #expect(spans.first?.attributes.get("http.response.status_code") == .int64(404))
            #expect(spans.last?.attributes.get("error.type") == .string("cannotConnectToHost"))
            #expect(spans.allSatisfy { $0.status?.code == .error })
        }
    }

    @Test("the span is a child of the calling task's span; operations and streamed bodies are traced too",
          arguments: BackendConfiguration.allCases)
    func parentsOperationsAndStreams(_ backend: BackendConfiguration) async throws {
        let tracer = W3CTestTracer()
        try await withObservedManager(backend, tracer: tracer) { api, _ in
            let parent = try await tracer.withSpan("handler") { span in
                _ = try await api.get("echo", as: Echo.self)
                return span.context.inMemorySpanContext
            }
            let child = try #require(tracer.finishedSpans.first { $0.operationName == "GET" })
            #expect(child.parentSpanID == parent?.spanID)
            #expect(child.traceID == parent?.traceID)
            tracer.recorder.clearFinishedSpans()

            let probe = HandlerProbe()
            let operation = api.GET("echo", success: probe.success, failure: probe.failure)
            #expect(await probe.waitForOneCall().successes == 1)
            let echo = try JSONDecoder().decode(Echo.self, from: try #require(operation?.responseData))
            let operationSpan = try #require(tracer.finishedSpans.first)
            #expect(Self.traceparent(echo) == W3CTestTracer.traceparent(traceID: operationSpan.traceID, spanID: operationSpan.spanID))
            tracer.recorder.clearFinishedSpans()

            let response = try await api.stream(.get, Route.bytes(1_000_000).path, bufferSize: 16 << 10)
            #expect(tracer.finishedSpans.isEmpty && tracer.activeSpans.count == 1, "the span lasts until the body ends")
            for try await _ in response.body {}
            #expect(await waitUntil { tracer.finishedSpans.count == 1 })
            #expect(tracer.finishedSpans.first?.attributes.get("http.response.status_code") == .int64(200))
        }
    }

    @Test("without a tracer nothing is injected", arguments: BackendConfiguration.allCases)
    func noTracer(_ backend: BackendConfiguration) async throws {
        try await withObservedManager(backend) { api, _ in
            let echo = try await api.get("echo", as: Echo.self)
            #expect(Self.traceparent(echo) == nil)
        }
    }
}
