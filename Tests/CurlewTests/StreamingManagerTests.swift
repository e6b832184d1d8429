import Curlew
import CurlewTesting
import CurlewTestServer
import CurlewTestSupport
import Testing

/// The manager's streamed bodies and Server-Sent Events, over its async path, on every backend: whole
/// bodies through small buffers, refused statuses, retries at the head, uploads from a producer,
/// reconnection with `Last-Event-ID`, shutdown and cancellation storms ending each request once.
@Suite("RequestOperationManager: streaming and Server-Sent Events")
struct StreamingManagerTests {
    @Test("a body streamed through a small buffer arrives whole; a refused status throws with its body",
          arguments: BackendConfiguration.allCases)
    func streamsWhole(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            let count = 3 << 20
            let response = try await api.stream(.get, Route.bytes(count).path, bufferSize: 32 << 10)
            #expect(response.head.status.code == 200)
            var checksum = FNV1a64()
            var received = 0
            for try await chunk in response.body {
                checksum.update(chunk)
                received += chunk.count
            }
            #expect(received == count)
            #expect(checksum.hexString == FNV1a64.hex(TestServer.checksum(TestServer.expectedBody(count: count))))

            let error = await #expect(throws: ResponseSerializationError.self) {
                _ = try await api.stream(.get, Route.status(404).path)
            }
            #expect(error?.statusCode == 404)
            #expect(error?.body.map { String(decoding: $0, as: UTF8.self) } == "404 Not Found\n")
        }
    }

    @Test("a retryable status is retried before the head is returned", arguments: BackendConfiguration.allCases)
    func retriesAtTheHead(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend) { api in
            api.retryPolicy = .quickForTests(maximumAttempts: 3)
            let key = uniqueKey("stream-manager-retry", backend)
            let response = try await api.stream(.get, Route.flaky(key: key, failures: 2).path)
            #expect(response.head.status.code == 200)
            let echo = try JSONDecoder().decode(Echo.self, from: try await response.body.collect(upTo: 1 << 20))
            #expect(echo.method == "GET")
            #expect(server.requests(forKey: key) == 3)
        }
    }

    @Test("an upload from a producer goes chunked and whole", arguments: BackendConfiguration.allCases)
    func uploadsFromAProducer(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            let pieces = (0..<40).map { index in Data(repeating: UInt8(index), count: 5_000) }
            let producer = AsyncStream<Data> { continuation in
                for piece in pieces { continuation.yield(piece) }
                continuation.finish()
            }
            let echo = try await api.upload(producer, to: Route.echo.path, as: Echo.self)
            #expect(echo.method == "POST")
            #expect(echo.bodyLength == 200_000)
            #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(Array(pieces.joined()))))
            #expect(echo.headerValues("Transfer-Encoding") == ["chunked"])
        }
    }

    @Test("events reconnect with Last-Event-ID after a drop, honour retry:, and end on a 204",
          arguments: BackendConfiguration.allCases)
    func serverSentEvents(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend) { api in
            let key = uniqueKey("stream-manager-events", backend)
            var received: [ServerSentEvent] = []
            for try await event in api.events(Route.events(key: key, count: 7, dropAfter: 3, retryMilliseconds: 10).path) {
                received.append(event)
            }
            #expect(received.map(\.id) == (1...7).map(String.init))
            #expect(received.allSatisfy { $0.type == "tick" })
            #expect(received.first?.data == "1\nsecond line")
            // Three connections deliver the seven events; the fourth is told to stop (204).
            #expect(server.lastEventIDs(forKey: key) == [nil, "3", "6", "7"])
        }
    }

    @Test("events from a response that is not an event stream fail without reconnecting", arguments: BackendConfiguration.allCases)
    func notAnEventStream(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            await #expect(throws: ResponseSerializationError.self) {
                for try await _ in api.events("json") {}
            }
        }
    }

    @Test("shutdown cancels a body being read, once; later calls fail at once", arguments: BackendConfiguration.allCases)
    func shutdownCancelsStreams(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let engine = TransferEngine(scheduler: backend.makeIsolatedScheduler())
        let counting = CountingTransport(engine)
        let api = RequestOperationManager(baseURL: server.baseURL, transport: counting)
        let key = uniqueKey("stream-manager-shutdown", backend)
        let response = try await api.stream(.get, Route.firehose(key: key, bytes: 256 << 20).path, bufferSize: 64 << 10)
        var iterator = response.body.makeAsyncIterator()
        _ = try await iterator.next()
        await api.shutdown()
        do {
            while try await iterator.next() != nil {}
            Issue.record("the body went on after the shutdown")
        } catch {
            #expect(error.code == .cancelled)
        }
        #expect(await waitUntil { counting.counts.value.completions == 1 })
        #expect(counting.counts.value == CountingTransport.Counts(made: 1, starts: 1, cancels: 1, completions: 1))
        await #expect(throws: TransferError.self) { _ = try await api.get("echo", as: Data.self) }
        await engine.shutdown()
    }

    @Test("a storm of calls and streams cancelled at random points ends each transfer exactly once",
          arguments: BackendConfiguration.allCases)
    func cancellationStorm(_ backend: BackendConfiguration) async throws {
        try await withSpiedManager(backend) { api, spy in
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<120 {
                    let task = Task {
                        if index.isMultiple(of: 2) {
                            let response = try await api.stream(.get, Route.drip(bytes: 4_000, chunks: 4, intervalMilliseconds: 20).path)
                            for try await _ in response.body {}
                        } else {
                            _ = try await api.get(Route.delay(index % 5 * 10).path, as: Data.self)
                        }
                    }
                    group.addTask {
                        for _ in 0..<(index % 7) { await Task.yield() }
                        task.cancel()
                        _ = await task.result
                    }
                }
            }
            #expect(await waitUntil { spy.counts.value.completions == spy.counts.value.made })
            let counts = spy.counts.value
            #expect(counts.made == counts.starts && counts.starts == counts.completions, "\(counts)")
            #expect(counts.cancels <= counts.made, "\(counts)")
            #expect(await holdsThroughout(.milliseconds(100)) { spy.counts.value == counts }, "a late second completion")
        }
    }

    @Test("a stub answers a streamed call in chunks, as the reader takes them")
    func stubStreams() async throws {
        let stub = StubTransport()
        let body = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        stub.respond(to: "/v1/big", with: StubTransport.Response(body: body))
        let api = RequestOperationManager(baseURL: URL(string: "https://api.example.com/v1/")!, transport: stub)
        let response = try await api.stream(.get, "big", bufferSize: 1_000)
        #expect(try await response.body.collect(upTo: 1 << 20) == body)
    }
}
