import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// Response bodies streamed to a consumer and request bodies streamed from an `AsyncSequence`, on
/// every backend: whole and byte-identical, with backpressure the server can see, cancelled exactly
/// once however the consumer gives up, failing typed, and sent once.
@Suite("Streaming")
struct StreamingTests {
    /// The large body streamed whole.
    static let largeBody = 32 << 20
    static let largeChecksum = TestServer.checksum(TestServer.expectedBody(count: largeBody))
    /// The firehose a consumer stops reading.
    static let firehoseBytes = 128 << 20
    static let firehoseChecksum = TestServer.checksum(TestServer.expectedBody(count: firehoseBytes))

    /// Reads `body` to its end: how many bytes came and their checksum.
    static func digest(_ body: ResponseBody) async throws -> (count: Int, checksum: UInt64) {
        var hasher = FNV1a64()
        var count = 0
        for try await chunk in body {
            chunk.withUnsafeBytes { hasher.update($0) }
            count += chunk.count
        }
        return (count, hasher.value)
    }

    /// Waits for the transfer's one completion (counted after a settling transfer).
    static func completion(_ streamed: StreamedTransfer, on engine: TransferEngine,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws -> Result<TransferResponse, TransferError> {
        let result = try #require(await streamed.recorder.result(), "the transfer never completed", sourceLocation: sourceLocation)
        await engine.settle()
        #expect(streamed.recorder.completionCount == 1, "completed \(streamed.recorder.completionCount) times",
                sourceLocation: sourceLocation)
        return result
    }

    // MARK: Whole bodies

    @Test("a large body streamed through a small buffer arrives whole, over HTTP/1.1 and HTTP/2 with TLS",
          arguments: BackendConfiguration.allCases, [false, true])
    func streamsWhole(_ backend: BackendConfiguration, tls: Bool) async throws {
        try await withEngine(backend) { engine in
            let streamed = engine.startStreaming(try .get(.bytes(Self.largeBody), tls: tls), bufferSize: 256 << 10)
            let (head, _) = try await streamed.stream.head()
            #expect(head.status == .ok)
            let digest = try await Self.digest(streamed.stream.body)
            #expect(digest.count == Self.largeBody)
            #expect(digest.checksum == Self.largeChecksum)
            let response = try await Self.completion(streamed, on: engine).get()
            #expect(response.metrics.httpVersion == (tls ? .http2 : .http1_1))
            #expect(response.body == nil, "a streamed body is not kept")
        }
    }

    @Test("engine.stream returns at the head; the body is read afterwards", arguments: BackendConfiguration.allCases)
    func engineStream(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let response = try await engine.stream(try .get(.chunked(bytes: 1 << 20, chunkSize: 1000)), bufferSize: 64 << 10)
            #expect(response.head.status == .ok)
            #expect(response.url.path == "/chunked/1048576")
            #expect(try await response.body.collect(upTo: 1 << 20) == Data(TestServer.expectedBody(count: 1 << 20)))
        }
    }

    @Test("collect(upTo:) stops a body past its limit with responseTooLarge", arguments: BackendConfiguration.allCases)
    func collectLimit(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let tag = UUID().uuidString
            let route = Route.firehose(key: uniqueKey("collect", backend), bytes: 64 << 20)
            let response = try await engine.stream(try TransferRequest.get(route).tagged(tag), bufferSize: 64 << 10)
            let error = await #expect(throws: TransferError.self) { try await response.body.collect(upTo: 1 << 20) }
            #expect(error?.code == .responseTooLarge)
            let server = try testServer()
            #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned })
            #expect(await waitUntil { await engine.diagnostics().liveTransfers == 0 })
        }
    }

    @Test("a challenge curl answers is not the stream's head: Basic and Digest streams get the 200; a wrong password streams the 401",
          arguments: BackendConfiguration.allCases)
    func challengeAnswered(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            for route in [Route.basicAuth(user: "ada", password: "lovelace"), .digestAuth(user: "ada", password: "lovelace")] {
                var request = try TransferRequest.get(route)
                request.options.credentials = TransferCredentials(user: "ada", password: "lovelace")
                let streamed = engine.startStreaming(request, bufferSize: 64 << 10)
                let (head, _) = try await streamed.stream.head()
                #expect(head.status == .ok, "\(route)")
                let body = try await streamed.stream.body.collect(upTo: 10_000)
                #expect(String(decoding: body, as: UTF8.self).contains("\"authenticated\":true"), "\(route)")
                #expect(try await Self.completion(streamed, on: engine).get().head.status == .ok)
            }
            var wrong = try TransferRequest.get(.basicAuth(user: "ada", password: "lovelace"))
            wrong.options.credentials = TransferCredentials(user: "ada", password: "wrong")
            let refused = engine.startStreaming(wrong, bufferSize: 64 << 10)
            #expect(try await refused.stream.head().0.status == .unauthorized)
            _ = try await refused.stream.body.collect(upTo: 10_000)
            #expect(try await Self.completion(refused, on: engine).get().head.status == .unauthorized)
        }
    }

    @Test("a 404 streams its body under the head's status", arguments: BackendConfiguration.allCases)
    func errorStatusStreams(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let streamed = engine.startStreaming(try .get(.status(404)), bufferSize: 64 << 10)
            let (head, _) = try await streamed.stream.head()
            #expect(head.status == .notFound)
            #expect(try await streamed.stream.body.collect(upTo: 1000) == Data("404 Not Found\n".utf8))
            #expect(try await Self.completion(streamed, on: engine).get().head.status == .notFound)
        }
    }

    @Test("a failure mid-body comes after the bytes that arrived, as the transfer's error",
          arguments: BackendConfiguration.allCases, [false, true])
    func failureMidBody(_ backend: BackendConfiguration, tls: Bool) async throws {
        try await withEngine(backend) { engine in
            let streamed = engine.startStreaming(try .get(.closeMidBody(bytes: 1 << 20), tls: tls), bufferSize: 64 << 10)
            var received = Data()
            let error = await #expect(throws: TransferError.self) {
                for try await chunk in streamed.stream.body { received.append(chunk) }
            }
            #expect(received == Data(TestServer.expectedBody(count: 1 << 19)), "half the body, then the error")
            let completion = try await Self.completion(streamed, on: engine)
            #expect(completion.failureValue == error, "the iteration throws the transfer's own error")
            #expect(error?.code != .cancelled)
        }
    }

    // MARK: Backpressure

    /// What may hold the bytes of a firehose a client stopped reading, in its order along the way:
    /// NIO's high-water mark on the server (64 KiB) and one of its 64 KiB writes, the server's socket
    /// send buffer and the client's receive buffer (at most the third fields of `tcp_wmem` and
    /// `tcp_rmem`), curl's kept read and the stream's buffer with one read over it (a streamed body's
    /// reads are as large as its buffer, between 16 and 256 KiB).
    static func firehoseBound(bufferSize: Int) throws -> Int {
        func maximum(_ file: String) throws -> Int {
            let fields = try String(contentsOfFile: file, encoding: .utf8).split(whereSeparator: \.isWhitespace)
            return try #require(fields.count == 3 ? Int(fields[2]) : nil, "\(file): \(fields)")
        }
        let kernel = try maximum("/proc/sys/net/ipv4/tcp_wmem") + maximum("/proc/sys/net/ipv4/tcp_rmem")
        let read = min(max(bufferSize, 16 << 10), 256 << 10)
        return (64 << 10) * 2 + kernel + 2 * read + bufferSize
    }

    /// How a firehose reaches the client.
    enum Wire: String, CaseIterable, CustomTestStringConvertible {
        case http1 = "HTTP/1.1"
        case http1TLS = "HTTP/1.1 over TLS"
        /// Cleartext HTTP/2: over TLS the server cannot count while the client stalls (the HTTP/2
        /// handler writes its frames in batches, and TLS completes a batch's promises together once
        /// all of it has left).
        case http2 = "HTTP/2 (h2c)"

        var testDescription: String { self.rawValue }

        func request(_ route: Route) throws -> TransferRequest {
            switch self {
            case .http1:
                return try .get(route)
            case .http1TLS:
                var request = try TransferRequest.get(route, tls: true)
                request.options.httpVersion = .http1_1
                return request
            case .http2:
                var request = TransferRequest(url: try testServer().h2cURL(route))
                request.options.httpVersion = .http2PriorKnowledge
                return request
            }
        }
    }

    /// Measured on this machine (`tcp_rmem` 4096 131072 33554432, `tcp_wmem` 4096 16384 4194304, so a
    /// bound of 36.2 MiB): the server stopped after 3.8-3.9 MiB over each wire, HTTP/2 included. curl
    /// 7.88.1 opens a 32 MiB stream window, but a paused transfer reads nothing from the socket, so
    /// the window is never what stops the server: the socket buffers are, as on HTTP/1.1.
    @Test("a consumer that stops reading stops the server; the rest follows when it reads again",
          arguments: BackendConfiguration.allCases, Wire.allCases)
    func backpressure(_ backend: BackendConfiguration, wire: Wire) async throws {
        let server = try testServer()
        let key = uniqueKey("firehose", backend)
        let total = Self.firehoseBytes
        let bufferSize = 64 << 10
        let bound = try Self.firehoseBound(bufferSize: bufferSize)
        #expect(bound < total / 2, "the kernel's buffers leave the test nothing to see")
        try await withEngine(backend) { engine in
            let response = try await engine.stream(try wire.request(.firehose(key: key, bytes: total)), bufferSize: bufferSize)
            var iterator = response.body.makeAsyncIterator()
            var hasher = FNV1a64()
            let first = try #require(try await iterator.next())
            first.withUnsafeBytes { hasher.update($0) }
            var received = first.count
            // The consumer reads no more: the server fills the buffers along the way and stops.
            #expect(await waitUntil { server.firehose(key).becameUnwritable > 0 }, "the server never stopped: \(server.firehose(key))")
            #expect(await holdsThroughout(.milliseconds(500)) { server.firehose(key).written <= bound },
                    "the server wrote \(server.firehose(key).written) bytes to a consumer that stopped; at most \(bound) fit")
            while let chunk = try await iterator.next() {
                chunk.withUnsafeBytes { hasher.update($0) }
                received += chunk.count
            }
            #expect(received == total)
            #expect(hasher.value == Self.firehoseChecksum)
            #expect(await waitUntil { server.firehose(key).written == total }, "\(server.firehose(key))")
        }
    }

    /// curl does not speed-check a transfer paused for its reader (7.88.1's `Curl_speedcheck` skips
    /// `KEEP_RECV_PAUSE`). The server's silence trips the same one-second idle timeout in 1.1-1.2 s
    /// (the next test), so a reader that stops for 2.5 s would trip it if the pause counted. Both
    /// use a server of their own: under the other tests' firehoses the shared one can take longer
    /// than a second to answer.
    @Test("a consumer that stops reading does not trip the idle timeout", arguments: BackendConfiguration.allCases)
    func idleConsumer(_ backend: BackendConfiguration) async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        try await withEngine(backend) { engine in
            var request = TransferRequest(url: server.url(.bytes(8 << 20)))
            request.options.idleTimeout = .seconds(1)
            let response = try await engine.stream(request, bufferSize: 64 << 10)
            var iterator = response.body.makeAsyncIterator()
            var received = try #require(try await iterator.next()).count
            try await Task.sleep(for: Self.consumerStall)  // the scenario: a reader busy elsewhere
            while let chunk = try await iterator.next() { received += chunk.count }
            #expect(received == 8 << 20)
        }
        await server.shutdownGracefully()
    }

    /// How long the idle consumer stops reading: beyond what the server's silence takes to trip the
    /// same one-second idle timeout (1.1-1.2 s on every backend, measured on a 2-core machine).
    static let consumerStall: Duration = .milliseconds(2500)

    @Test("the server's silence still trips the idle timeout while the consumer reads", arguments: BackendConfiguration.allCases)
    func serverSilence(_ backend: BackendConfiguration) async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        try await withEngine(backend) { engine in
            var request = TransferRequest(url: server.url(.drip(bytes: 2, chunks: 2, intervalMilliseconds: 120_000)))
            request.options.idleTimeout = .seconds(1)
            let response = try await engine.stream(request, bufferSize: 64 << 10)
            var received = 0
            let error = await #expect(throws: TransferError.self) {
                for try await chunk in response.body { received += chunk.count }
            }
            #expect(error?.code == .timedOut)
            #expect(received == 1, "the first byte, then silence")
        }
        await server.shutdownGracefully()
    }

    // MARK: Cancellation

    @Test("cancelling the reading task cancels the transfer, once", arguments: BackendConfiguration.allCases)
    func cancelReadingTask(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let (streamed, tag) = try Self.startFirehose(engine, backend)
            let received = Locked(0)
            let reader = Task {
                for try await chunk in streamed.stream.body { received.withLock { $0 += chunk.count } }
            }
            #expect(await waitUntil { received.value > 0 })
            reader.cancel()
            let error = await reader.result.failureValue as? TransferError
            #expect(error?.code == .cancelled)
            try await Self.expectCancelledOnce(streamed, tag: tag, on: engine)
        }
    }

    @Test("breaking out of the loop cancels the transfer, once", arguments: BackendConfiguration.allCases)
    func breakOutOfLoop(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let (streamed, tag) = try Self.startFirehose(engine, backend)
            var received = 0
            for try await chunk in streamed.stream.body {
                received += chunk.count
                if received > 1 << 20 { break }
            }
            try await Self.expectCancelledOnce(streamed, tag: tag, on: engine)
        }
    }

    @Test("dropping the response unread cancels the transfer", arguments: BackendConfiguration.allCases)
    func dropUnread(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let tag = UUID().uuidString
            do {
                let response = try await engine.stream(try TransferRequest.get(.firehose(key: uniqueKey("drop", backend), bytes: 64 << 20)).tagged(tag))
                #expect(response.head.status == .ok)
            }
            #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned })
            #expect(await waitUntil { await engine.diagnostics().liveTransfers == 0 })
            #expect(await engine.diagnostics().transfersCompleted == 1)
        }
        try await withEngine(backend) { engine in
            let (streamed, tag) = try Self.startFirehose(engine, backend)
            _ = try await streamed.stream.head()
            _ = streamed.stream.body  // made and dropped unread
            try await Self.expectCancelledOnce(streamed, tag: tag, on: engine)
        }
    }

    @Test("a reader cancelled after the transfer ended gets the cancellation, not a cut body taken for whole",
          arguments: BackendConfiguration.allCases)
    func cancelledReaderAfterTheEnd(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let streamed = engine.startStreaming(try .get(.bytes(200_000)), bufferSize: 1 << 20)
            _ = try await Self.completion(streamed, on: engine).get()  // everything is buffered now
            let (gate, open) = AsyncStream<Void>.makeStream()
            let reader = Task { () async throws -> Int in
                for await _ in gate {}  // ends once the task is cancelled
                var received = 0
                for try await chunk in streamed.stream.body { received += chunk.count }
                return received
            }
            reader.cancel()
            let result = await reader.result
            open.finish()
            #expect((result.failureValue as? TransferError)?.code == .cancelled, "\(result)")
        }
    }

    /// Two hundred streams of various sizes, each ended a way drawn at random: cancelled before
    /// the head, read partly and cancelled or left, dropped, stopped with `cancel()`, or read whole.
    @Test("a cancel storm completes each transfer exactly once and leaves nothing behind", arguments: BackendConfiguration.allCases)
    func cancelStorm(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            var random = SplitMix64(seed: 0x5EED_0034)
            let plans = (0..<200).map { _ in StormPlan(&random) }
            let outcomes = try await withThrowingTaskGroup(of: (StormPlan, StreamedTransfer, Int?).self) { group in
                for plan in plans {
                    let streamed = engine.startStreaming(try .get(.bytes(plan.size)), bufferSize: 16 << 10)
                    group.addTask { (plan, streamed, await plan.run(streamed)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (_, streamed, _) in outcomes {
                #expect(await streamed.recorder.result() != nil, "a transfer never completed")
            }
            await engine.settle()
            for (plan, streamed, received) in outcomes {
                #expect(streamed.recorder.completionCount == 1, "\(plan): \(streamed.recorder.completionCount) completions")
                if plan.ending == .readWhole {
                    #expect(received == plan.size, "\(plan)")
                    #expect((try? streamed.recorder.events.value.completions.first?.get()) != nil, "\(plan)")
                }
            }
            #expect(await engine.diagnostics().liveTransfers == 0)
        }
    }

    // MARK: One transfer per stream

    @Test("a transfer refused a response stream another has leaves that one whole", arguments: BackendConfiguration.allCases)
    func oneTransferPerResponseStream(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let first = engine.startStreaming(try .get(.bytes(2 << 20)), bufferSize: 64 << 10)
            _ = try await first.stream.head()  // the first transfer has claimed the stream
            var second = try TransferRequest.get(.bytes(10))
            second.destination = .stream(first.stream)
            let (result, _) = try await engine.run(second)
            #expect(result.failureValue?.code == .invalidRequest)
            let digest = try await Self.digest(first.stream.body)
            #expect(digest.count == 2 << 20)
            #expect(digest.checksum == TestServer.checksum(TestServer.expectedBody(count: 2 << 20)))
            _ = try await Self.completion(first, on: engine).get()
        }
    }

    @Test("a request stream is sent by one transfer; one refused it leaves it to the other", arguments: BackendConfiguration.allCases)
    func oneTransferPerRequestStream(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            // Started, then refused to a second transfer: the first still sends it whole.
            let (pieces, feed) = AsyncStream<Data>.makeStream()
            let body = RequestBodyStream(pieces)
            let recorder = TransferRecorder(engine)
            engine.makeTransfer(TransferRequest(url: server.url(.echo), method: .post, body: .stream(body)), delegate: recorder).start()
            feed.yield(Data(repeating: 1, count: 1000))
            #expect(await waitUntil { body.hasStarted })
            let (refused, _) = try await engine.run(TransferRequest(url: server.url(.echo), method: .post, body: .stream(body)))
            #expect(refused.failureValue?.code == .requestBodyStreamExhausted)
            feed.yield(Data(repeating: 2, count: 1000))
            feed.finish()
            let echo = try EchoReply(try #require(await recorder.result()).get())
            #expect(echo.bodyLength == 2000)
            #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum([UInt8](repeating: 1, count: 1000) + [UInt8](repeating: 2, count: 1000))))
        }
        try await withEngine(backend) { engine in
            // Attached to a transfer still connecting (to a blackhole): a second one is refused; once
            // the first is gone, never having read it, a third sends it.
            let body = RequestBodyStream(AsyncStream<Data> { continuation in
                continuation.yield(Data(repeating: 3, count: 500))
                continuation.finish()
            })
            let connecting = TransferRecorder(engine)
            let hanging = engine.makeTransfer(TransferRequest(url: server.blackholeURL, method: .post, body: .stream(body)),
                                              delegate: connecting)
            hanging.start()
            _ = await engine.diagnostics()  // the start went through the context before this
            let (refused, _) = try await engine.run(TransferRequest(url: server.url(.echo), method: .post, body: .stream(body)))
            #expect(refused.failureValue?.code == .invalidRequest)
            hanging.cancel()
            #expect(await connecting.result()?.failureValue?.code == .cancelled)
            #expect(!body.hasStarted)
            let echo = try EchoReply(try await engine.fetch(TransferRequest(url: server.url(.echo), method: .post, body: .stream(body))))
            #expect(echo.bodyLength == 500)
        }
    }

    // MARK: Uploads

    /// `count` chunks of `size` bytes, chunk `i` filled with `i`, and their checksum.
    static func pieces(_ count: Int, of size: Int) -> (AsyncStream<Data>, length: Int, checksum: String) {
        var hasher = FNV1a64()
        for index in 0..<count { hasher.update([UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size)) }
        let stream = AsyncStream<Data> { continuation in
            for index in 0..<count { continuation.yield(Data(repeating: UInt8(truncatingIfNeeded: index), count: size)) }
            continuation.finish()
        }
        return (stream, count * size, hasher.hexString)
    }

    @Test("a body of unknown length goes chunked on HTTP/1.1 and as DATA frames on HTTP/2",
          arguments: BackendConfiguration.allCases, [false, true])
    func uploadUnknownLength(_ backend: BackendConfiguration, tls: Bool) async throws {
        try await withEngine(backend) { engine in
            let (pieces, length, checksum) = Self.pieces(100, of: 10_000)
            var request = try TransferRequest.get(.echo, tls: tls)
            request.head.method = .post
            request.body = .stream(RequestBodyStream(pieces, bufferSize: 32 << 10))
            let response = try await engine.fetch(request)
            #expect(response.metrics.httpVersion == (tls ? .http2 : .http1_1))
            let echo = try EchoReply(response)
            #expect(echo.bodyLength == length)
            #expect(echo.bodyChecksum == checksum)
            #expect(echo.headerValues("content-length").isEmpty)
            if !tls {
                #expect(echo.headerValues("transfer-encoding") == ["chunked"])
            }
            // Over HTTP/2 the server's codec adds `transfer-encoding: chunked` to the HTTP/1 head it makes
            // of a request without a length; a client sending that field would have been refused (it is
            // connection-specific), so the echo shows plain DATA frames.
        }
    }

    @Test("a body of known length goes with Content-Length", arguments: BackendConfiguration.allCases, [false, true])
    func uploadKnownLength(_ backend: BackendConfiguration, tls: Bool) async throws {
        try await withEngine(backend) { engine in
            let (pieces, length, checksum) = Self.pieces(40, of: 25_000)
            var request = try TransferRequest.get(.echo, tls: tls)
            request.head.method = .put
            request.body = .stream(RequestBodyStream(pieces, length: Int64(length)))
            let echo = try EchoReply(try await engine.fetch(request))
            #expect(echo.bodyLength == length)
            #expect(echo.bodyChecksum == checksum)
            #expect(echo.headerValues("content-length") == ["\(length)"])
            #expect(echo.headerValues("transfer-encoding").isEmpty)
        }
    }

    @Test("a sequence shorter or longer than the length announced fails the body", arguments: BackendConfiguration.allCases)
    func uploadWrongLength(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            for announced in [999_999, 1_000_001, 2_000_000] as [Int64] {
                let (pieces, _, _) = Self.pieces(100, of: 10_000)
                let request = TransferRequest(url: server.url(.echo), method: .post,
                                              body: .stream(RequestBodyStream(pieces, length: announced)))
                let error = try await engine.failure(request)
                #expect(error.code == .requestBodyFileChanged, "\(announced): \(error)")
            }
        }
    }

    /// curl asks for nothing past the length it announced, so a sequence that yields more only once
    /// curl has taken the rest must still be caught: the last byte waits for the sequence's end.
    @Test("a sequence that goes on after the length announced fails, even once curl has the rest", arguments: BackendConfiguration.allCases)
    func uploadMoreAfterTheLength(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let (pieces, feed) = AsyncStream<Data>.makeStream()
            let recorder = TransferRecorder(engine)
            let request = TransferRequest(url: server.url(.echo), method: .post,
                                          body: .stream(RequestBodyStream(pieces, length: 100_000)))
            engine.makeTransfer(request, delegate: recorder).start()
            feed.yield(Data(repeating: 9, count: 100_000))
            #expect(await waitUntil {
                recorder.completionCount > 0 || (recorder.events.value.progress.last?.bytesSent ?? 0) >= 99_999
            })
            feed.yield(Data(repeating: 9, count: 1))
            feed.finish()
            let result = try #require(await recorder.result())
            #expect(result.failureValue?.code == .requestBodyFileChanged, "\(result)")
        }
    }

    @Test("a sequence that throws fails the transfer with requestBodyStreamExhausted", arguments: BackendConfiguration.allCases)
    func uploadSequenceThrows(_ backend: BackendConfiguration) async throws {
        struct Broken: Error {}
        let server = try testServer()
        try await withEngine(backend) { engine in
            let pieces = AsyncThrowingStream<Data, any Error> { continuation in
                continuation.yield(Data(repeating: 1, count: 50_000))
                continuation.finish(throwing: Broken())
            }
            let request = TransferRequest(url: server.url(.echo), method: .post, body: .stream(RequestBodyStream(pieces)))
            let error = try await engine.failure(request)
            #expect(error.code == .requestBodyStreamExhausted)
            #expect(error.message.contains("Broken"), "\(error)")
        }
    }

    /// While the producer has nothing, curl is paused: neither the socket nor curl's timer keep the
    /// engine busy. Measured over 300 ms of waiting: at most one socket action and three timer
    /// firings (curl's own timeouts); a busy loop would show thousands.
    @Test("a slow producer: the transfer waits for it without spinning", arguments: BackendConfiguration.allCases)
    func slowProducer(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let (pieces, feed) = AsyncStream<Data>.makeStream()
            let recorder = TransferRecorder(engine)
            engine.makeTransfer(TransferRequest(url: server.url(.echo), method: .post, body: .stream(RequestBodyStream(pieces))),
                                delegate: recorder).start()
            var sent: [UInt8] = []
            for step in 1...3 {
                let piece = [UInt8](repeating: UInt8(step), count: 30_000 * step)
                sent += piece
                feed.yield(Data(piece))
                #expect(await waitUntil { (recorder.events.value.progress.last?.bytesSent ?? 0) == Int64(sent.count) })
                let before = await engine.diagnostics()
                #expect(await holdsThroughout(.milliseconds(300)) {
                    let now = await engine.diagnostics()
                    return now.socketActions - before.socketActions <= 20 && now.timerFirings - before.timerFirings <= 20
                }, "the engine spins while the producer is behind")
            }
            feed.finish()
            let echo = try EchoReply(try #require(await recorder.result()).get())
            #expect(echo.bodyLength == sent.count)
            #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(sent)))
        }
    }

    /// The server reads nothing of the body until released: the producer is asked for no more than
    /// what the buffers along the way hold.
    @Test("a server that does not read holds the producer back", arguments: BackendConfiguration.allCases, [false, true])
    func uploadBackpressure(_ backend: BackendConfiguration, tls: Bool) async throws {
        let server = try testServer()
        let key = uniqueKey("hold", backend)
        let total = 64 << 20
        let bufferSize = 256 << 10
        // The stream's buffer and one chunk, curl's upload buffer (64 KiB), the kernel's buffers, and
        // what NIO read before it stopped (at most 16 reads of 64 KiB).
        let bound = try Self.firehoseBound(bufferSize: bufferSize) + (64 << 10) + 16 * (64 << 10)
        try await withEngine(backend) { engine in
            let producer = CountingChunks(chunkSize: 64 << 10, total: total)
            var request = try TransferRequest.get(.holdUpload(key: key), tls: tls)
            request.head.method = .post
            request.body = .stream(RequestBodyStream(producer, bufferSize: bufferSize))
            let recorder = TransferRecorder(engine)
            engine.makeTransfer(request, delegate: recorder).start()
            #expect(await waitUntil { server.requests(forKey: key) == 1 })
            #expect(await waitUntil { producer.produced.value > 0 })
            #expect(await holdsThroughout(.milliseconds(500)) { producer.produced.value <= bound },
                    "the producer was asked for \(producer.produced.value) bytes the server did not take; at most \(bound) fit")
            server.releaseUpload(key)
            let echo = try EchoReply(try #require(await recorder.result()).get())
            #expect(echo.bodyLength == total)
        }
    }

    // MARK: Sent once

    @Test("a 307 that needs a started stream again fails typed; a 303 drops the body and works", arguments: BackendConfiguration.allCases)
    func redirects(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let echo = server.url(.echo).absoluteString
        try await withEngine(backend) { engine in
            let (pieces, _, _) = Self.pieces(10, of: 1000)
            let keep = TransferRequest(url: server.url(.redirectTo(url: echo, status: 307)), method: .post,
                                       body: .stream(RequestBodyStream(pieces)))
            let error = try await engine.failure(keep)
            #expect(error.code == .requestBodyStreamExhausted)

            let (again, _, _) = Self.pieces(10, of: 1000)
            let drop = TransferRequest(url: server.url(.redirectTo(url: echo, status: 303)), method: .post,
                                       body: .stream(RequestBodyStream(again)))
            let reply = try EchoReply(try await engine.fetch(drop))
            #expect(reply.method == "GET")
            #expect(reply.bodyLength == 0)
        }
    }

    @Test("a retry may send a stream never read; after bytes were read the attempt's outcome stands", arguments: BackendConfiguration.allCases)
    func retries(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let quick = RetryPolicy.quickForTests(maximumAttempts: 3)
        try await withEngine(backend) { engine in
            // Refused three times: each attempt takes the stream again, none reads it.
            let unread = CountingChunks(chunkSize: 1000, total: 10_000)
            let body = RequestBodyStream(unread, length: 10_000)
            let refused = TransferRequest(url: server.refusedURL, method: .put, body: .stream(body))
            let error = await #expect(throws: TransferError.self) { try await engine.execute(refused, retry: quick) }
            #expect(error?.code == .cannotConnectToHost, "every attempt had the stream: \(String(describing: error))")
            #expect(!body.hasStarted)
            #expect(unread.produced.value == 0)

            // A 503 after the whole body: the retry cannot send it again, so the 503 is the outcome.
            let key = uniqueKey("stream-retry", backend)
            let (pieces, _, _) = Self.pieces(10, of: 1000)
            let flaky = TransferRequest(url: server.url(.flaky(key: key, failures: 1)), method: .put,
                                        body: .stream(RequestBodyStream(pieces)))
            let response = try await engine.execute(flaky, retry: quick)
            #expect(response.head.status.code == 503)
            #expect(response.metrics.retryCount == 0)
            #expect(server.requests(forKey: key) == 1, "nothing was sent again")
        }
    }

    // MARK: Both ways, pause

    @Test("a body streamed up while the response streams down", arguments: BackendConfiguration.allCases)
    func bothWays(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let (pieces, length, checksum) = Self.pieces(50, of: 20_000)
            let request = TransferRequest(url: server.url(.echo), method: .post,
                                          body: .stream(RequestBodyStream(pieces, bufferSize: 16 << 10)))
            let response = try await engine.stream(request, bufferSize: 256)
            let reply = try JSONDecoder().decode(EchoReply.self, from: try await response.body.collect(upTo: 1 << 20))
            #expect(reply.bodyLength == length)
            #expect(reply.bodyChecksum == checksum)
        }
    }

    @Test("Transfer.pause() does nothing to a streamed transfer", arguments: BackendConfiguration.allCases)
    func pauseIgnored(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let streamed = engine.startStreaming(try .get(.bytes(4 << 20)), bufferSize: 64 << 10)
            _ = try await streamed.stream.head()
            streamed.transfer.pause()
            let digest = try await Self.digest(streamed.stream.body)
            #expect(digest.count == 4 << 20)
            _ = try await Self.completion(streamed, on: engine).get()
            #expect(streamed.recorder.events.value.pauses == 0)
        }
    }

    // MARK: Helpers

    /// A firehose of 64 MiB, tagged, streamed through a 64 KiB buffer.
    static func startFirehose(_ engine: TransferEngine, _ backend: BackendConfiguration) throws -> (StreamedTransfer, String) {
        let tag = UUID().uuidString
        let request = try TransferRequest.get(.firehose(key: uniqueKey("cancel", backend), bytes: 64 << 20)).tagged(tag)
        return (engine.startStreaming(request, bufferSize: 64 << 10), tag)
    }

    /// The transfer completed once, cancelled; the server saw the client leave; nothing is live.
    static func expectCancelledOnce(_ streamed: StreamedTransfer, tag: String, on engine: TransferEngine,
                                    sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let server = try testServer()
        let result = try await Self.completion(streamed, on: engine, sourceLocation: sourceLocation)
        #expect(result.failureValue?.code == .cancelled, "\(result)", sourceLocation: sourceLocation)
        #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned },
                "\(server.requests(tagged: tag))", sourceLocation: sourceLocation)
        #expect(await engine.diagnostics().liveTransfers == 0, sourceLocation: sourceLocation)
    }
}

/// A transfer whose response body is streamed, with a recorder for its one completion.
struct StreamedTransfer: Sendable {
    let transfer: Transfer
    let stream: ResponseBodyStream
    let recorder: TransferRecorder
}

extension TransferEngine {
    /// Starts `request` with its body streamed through a buffer of `bufferSize` bytes.
    func startStreaming(_ request: TransferRequest, bufferSize: Int) -> StreamedTransfer {
        let stream = ResponseBodyStream(bufferSize: bufferSize)
        var request = request
        request.destination = .stream(stream)
        let recorder = TransferRecorder(self)
        let transfer = self.makeTransfer(request, delegate: recorder)
        transfer.start()
        return StreamedTransfer(transfer: transfer, stream: stream, recorder: recorder)
    }
}

/// Chunks of zeros up to `total` bytes, counting what was asked of it.
struct CountingChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let chunkSize: Int
    let total: Int
    /// Bytes handed out so far.
    let produced = Locked(0)

    struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: CountingChunks

        mutating func next() async -> Data? {
            let size = self.sequence.produced.withLock { produced -> Int in
                let size = Swift.min(self.sequence.chunkSize, self.sequence.total - produced)
                produced += size
                return size
            }
            return size > 0 ? Data(count: size) : nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self)
    }
}

/// How one stream of the cancel storm ends.
struct StormPlan: Sendable, CustomStringConvertible {
    enum Ending: CaseIterable {
        /// The task waiting for the head is cancelled.
        case cancelBeforeHead
        /// Reads some chunks, then its task is cancelled.
        case cancelTaskMidBody
        /// Reads some chunks, then leaves the loop.
        case breakMidBody
        /// Gets the head and drops the body unread.
        case dropUnread
        /// Reads some chunks, then calls `cancel()` on the stream.
        case cancelStream
        /// Reads to the end.
        case readWhole
    }

    let size: Int
    let ending: Ending
    /// Chunks read before ending.
    let chunks: Int

    init(_ random: inout SplitMix64) {
        self.size = [0, 1, 20_000, 300_000, 2 << 20][Int(random.next() % 5)]
        self.ending = Ending.allCases[Int(random.next() % UInt64(Ending.allCases.count))]
        self.chunks = Int(random.next() % 20)
    }

    var description: String { "\(self.ending) after \(self.chunks) chunks of \(self.size) bytes" }

    /// Ends the stream as planned; the bytes read when it was read whole.
    func run(_ streamed: StreamedTransfer) async -> Int? {
        let stream = streamed.stream
        switch self.ending {
        case .cancelBeforeHead:
            let waiting = Task { try await stream.head() }
            waiting.cancel()
            _ = await waiting.result
            _ = stream.body  // when the head had come first, the body dropped unread ends it
            return nil
        case .cancelTaskMidBody:
            let reader = Task {
                var iterator = stream.body.makeAsyncIterator()
                for _ in 0..<self.chunks { _ = try await iterator.next() }
                withUnsafeCurrentTask { $0?.cancel() }
                while try await iterator.next() != nil {}
            }
            _ = await reader.result
            return nil
        case .breakMidBody, .cancelStream:
            var read = 0
            do {
                for try await _ in stream.body {
                    read += 1
                    if read >= self.chunks { break }
                }
            } catch {
                return nil
            }
            if self.ending == .cancelStream { stream.cancel() }
            return nil
        case .dropUnread:
            _ = try? await stream.head()
            _ = stream.body
            return nil
        case .readWhole:
            var received = 0
            do {
                for try await chunk in stream.body { received += chunk.count }
            } catch {
                return nil
            }
            return received
        }
    }
}
