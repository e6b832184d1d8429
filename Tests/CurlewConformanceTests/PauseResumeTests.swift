import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// Pause releases the connection and keeps the body; resume continues with a range request when the
/// server allows it and starts over when not. The body is byte-identical either way. The server's
/// record of each request (tagged) shows what was really asked: the first request abandoned at the
/// pause, then the `Range` and `If-Range` of the resumed one, or none.
@Suite("Pause and resume")
struct PauseResumeTests {
    /// The server sends each body chunk this long after the previous one. The first request of each
    /// test's tag stops after its first chunk until the client leaves (`holdFirst`), so the pause lands
    /// in the middle of a body still on its way however late the client gets to it: a busy machine (a
    /// parallel suite, ThreadSanitizer) once delayed the client past the whole 200 ms drip, and the
    /// server had sent everything before the pause. The resumed request drips at this interval.
    static let dripInterval = 200

    /// Pauses at the first body bytes, waits for the pause, resumes, returns the result and what the
    /// server saw of the requests: the first one was abandoned when the pause released the connection.
    private func pauseOnceAndResume(_ engine: TransferEngine, _ request: TransferRequest) async throws
        -> (TransferResponse, TransferRecorder, [TaggedRequest])
    {
        let server = try testServer()
        let tag = UUID().uuidString
        let pausedOnce = Locked(false)
        let recorder = TransferRecorder(engine, onProgress: { transfer, _ in
            let first = pausedOnce.withLock { paused -> Bool in
                defer { paused = true }
                return !paused
            }
            if first { transfer.pause() }
        })
        let transfer = engine.makeTransfer(request.tagged(tag), delegate: recorder)
        transfer.start()
        #expect(await waitUntil { recorder.events.value.pauses == 1 })
        #expect(recorder.events.value.progress.count == 1, "no body after the pause")
        let kept = recorder.events.value.progress.last?.bytesReceived ?? 0
        #expect(kept > 0)
        #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned },
                "the pause did not release the connection: \(server.requests(tagged: tag))")
        transfer.resume()
        let response = try #require(await recorder.result()).get()
        await engine.settle()
        #expect(recorder.completionCount == 1)
        let requests = server.requests(tagged: tag)
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.first?.range == nil)
        #expect(requests.last?.outcome == .answered)
        return (response, recorder, requests)
    }

    @Test("with range support: continues from where it paused", arguments: BackendConfiguration.allCases)
    func withRanges(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let route = Route.entity(bytes: 400_000, dripChunkSize: 100_000, dripIntervalMilliseconds: Self.dripInterval, holdFirst: true)
            let (response, recorder, requests) = try await self.pauseOnceAndResume(engine, try .get(route))
            #expect(response.body == Data(try #require(route.expectedBody)))
            #expect(response.head.status == .ok)
            #expect(response.metrics.resumeCount == 1)
            #expect(recorder.events.value.heads.count == 1, "a resumed body must not report a new response")
            let received = recorder.events.value.progress.map(\.bytesReceived)
            #expect(received == received.sorted())
            // The server's side: the second request asked for the rest of the same entity, and got it.
            let kept = try #require(received.first)
            #expect(requests.last?.range == "bytes=\(kept)-")
            #expect(requests.last?.ifRange == route.entityETag)
            #expect(requests.last?.status == 206)
        }
    }

    @Test("without range support: starts over, same bytes", arguments: BackendConfiguration.allCases)
    func withoutRanges(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let route = Route.entity(bytes: 400_000, ranges: false, dripChunkSize: 100_000, dripIntervalMilliseconds: Self.dripInterval, holdFirst: true)
            let (response, _, requests) = try await self.pauseOnceAndResume(engine, try .get(route))
            #expect(response.body == Data(try #require(route.expectedBody)))
            #expect(response.metrics.resumeCount == 1)
            #expect(requests.last?.status == 200, "the server sent the whole body again")
        }
    }

    @Test("without a validator: starts over, same bytes", arguments: BackendConfiguration.allCases)
    func withoutValidator(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let route = Route.entity(bytes: 200_000, etag: nil, lastModified: false, dripChunkSize: 50_000, dripIntervalMilliseconds: Self.dripInterval, holdFirst: true)
            let (response, _, requests) = try await self.pauseOnceAndResume(engine, try .get(route))
            #expect(response.body == Data(try #require(route.expectedBody)))
            #expect(requests.last?.range == nil, "without a validator there is nothing to continue: no Range")
            #expect(requests.last?.status == 200)
        }
    }

    @Test("to a file", arguments: BackendConfiguration.allCases)
    func toFile(_ backend: BackendConfiguration) async throws {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-resume-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        try await withEngine(backend) { engine in
            let route = Route.entity(bytes: 300_000, dripChunkSize: 100_000, dripIntervalMilliseconds: Self.dripInterval, holdFirst: true)
            var request = try TransferRequest.get(route)
            request.destination = .file(destination)
            let (response, _, requests) = try await self.pauseOnceAndResume(engine, request)
            #expect(response.fileURL == destination)
            #expect(requests.last?.status == 206, "the file was continued, not fetched again")
            #expect(try Data(contentsOf: destination) == Data(try #require(route.expectedBody)))
        }
    }

    /// A paused transfer holds no connection (the engine's count and the server's view agree), stays
    /// live in the engine, and a cancel then ends it with the cancellation error.
    @Test("pause releases the connection", arguments: BackendConfiguration.allCases)
    func pauseReleasesConnection(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let server = try testServer()
            let tag = UUID().uuidString
            let route = Route.entity(bytes: 400_000, dripChunkSize: 100_000, dripIntervalMilliseconds: Self.dripInterval, holdFirst: true)
            let recorder = TransferRecorder(engine, onProgress: { transfer, _ in transfer.pause() })
            let transfer = engine.makeTransfer(try TransferRequest.get(route).tagged(tag), delegate: recorder)
            transfer.start()
            #expect(await waitUntil { recorder.events.value.pauses == 1 })
            // The connection had body bytes in flight, so curl closed it rather than pool it.
            await engine.waitForOpenSockets(0)
            #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned }, "the server still sends")
            #expect(await engine.diagnostics().liveTransfers == 1)
            transfer.cancel()
            let result = try #require(await recorder.result())
            guard case .failure(let error) = result else {
                Issue.record("a paused transfer, cancelled, succeeded")
                return
            }
            #expect(error.code == .cancelled)
            #expect(error.failingURL == server.url(route))
            await engine.settle()
            #expect(recorder.completionCount == 1)
            #expect(await engine.diagnostics().liveTransfers == 0)
            #expect(server.requests(tagged: tag).count == 1, "a cancelled paused transfer asked again")
        }
    }

    @Test("pause and resume are ignored out of place", arguments: BackendConfiguration.allCases)
    func ignoredOutOfPlace(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let recorder = TransferRecorder(engine)
            let transfer = engine.makeTransfer(try .get(.bytes(1000)), delegate: recorder)
            transfer.resume()  // not paused
            transfer.pause()   // not running
            transfer.start()
            transfer.resume()  // running, not paused
            #expect(try #require(await recorder.result()).get().body?.count == 1000)
            #expect(recorder.events.value.pauses == 0)
        }
    }
}
