import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

/// Pause only when executing, resume only when paused; the body is byte-identical whether the
/// server lets the operation continue with a range or makes it start over.
@Suite("RequestOperation: pause and resume")
struct PauseResumeTests {
    /// Pauses at the first body bytes, checks the paused state, resumes, and returns the finished
    /// operation with what the server saw of its requests (tagged): the first one abandoned at the
    /// pause, then the resumed one.
    ///
    /// The pause comes from the progress handler, a hop away from the network context. The route
    /// holds the first request after its first piece until the client leaves (`holdFirst`), so the
    /// pause lands mid-body however late the handler runs; the resumed request drips at 100 ms. (This
    /// used to try 100, 400, then 1,600 ms between chunks, for slack on a loaded machine.)
    private func pauseOnceAndResume(
        _ engine: TransferEngine, _ route: Route
    ) async throws -> (RequestOperation, [TaggedRequest]) {
        let server = try testServer()
        let tag = UUID().uuidString
        let operation = RequestOperation(request: try TransferRequest.get(route).tagged(tag), engine: engine)
        let notifications = MarkedQueue("notifications")
        let probe = OperationProbe(operation, notificationQueue: notifications)
        operation.progressQueue = DispatchQueue(label: "progress")  // serial: overcommit, never starved
        let kept = Locked<Int64?>(nil)
        operation.downloadProgressHandler = { [weak operation] progress in
            guard let operation, progress.bytesReceived > 0, kept.value == nil else { return }
            kept.set(progress.bytesReceived)
            operation.pause()
        }
        operation.start()
        #expect(await waitUntil {
            probe.record.value.notifications.contains(RequestOperation.didPauseNotification) || operation.isFinished
        })
        let pausedState = operation.isPaused && !operation.isExecuting && !operation.isFinished
        operation.pause()  // already paused: ignored
        operation.resume()
        let record = await probe.expectFinishedOnce()
        #expect(record.successes == 1)
        #expect(operation.responseData == Data(try #require(route.expectedBody)))
        #expect(operation.response?.metrics.resumeCount == 1)
        #expect(pausedState, "between the pause and the resume the operation is paused, not executing")
        #expect(try #require(kept.value) < Int64(try #require(route.expectedBody).count))
        #expect(record.notifications == [RequestOperation.didStartNotification, RequestOperation.didPauseNotification,
                                         RequestOperation.didFinishNotification])
        let requests = server.requests(tagged: tag)
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.first?.outcome == .abandoned, "the pause released the connection mid-body")
        #expect(requests.first?.range == nil)
        return (operation, requests)
    }

    @Test("with range support: continues where it paused, same bytes", arguments: BackendConfiguration.allCases)
    func withRanges(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let route = Route.entity(bytes: 120_000, dripChunkSize: 10_000, dripIntervalMilliseconds: 100, holdFirst: true)
            let (operation, requests) = try await self.pauseOnceAndResume(engine, route)
            let expected = Data(try #require(route.expectedBody))
            #expect(operation.responseData == expected)
            #expect(operation.responseObject as? Data == expected)
            #expect(operation.response?.head.status == .ok)
            // The server's side: the rest of the same entity was asked for, and sent.
            let resumed = try #require(requests.last)
            #expect(resumed.range?.hasPrefix("bytes=") == true && resumed.range?.hasSuffix("-") == true, "\(resumed)")
            #expect(resumed.range != "bytes=0-", "the resumed request must not start from zero")
            #expect(resumed.ifRange == route.entityETag)
            #expect(resumed.status == 206)
        }
    }

    @Test("without range support: starts over, same bytes", arguments: BackendConfiguration.allCases)
    func withoutRanges(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let route = Route.entity(
                bytes: 120_000, ranges: false, dripChunkSize: 10_000, dripIntervalMilliseconds: 100, holdFirst: true)
            let (operation, requests) = try await self.pauseOnceAndResume(engine, route)
            #expect(operation.responseData == Data(try #require(route.expectedBody)))
            #expect(requests.last?.status == 200, "the server sent the whole body again")
        }
    }

    @Test("pause only when executing, resume only when paused", arguments: BackendConfiguration.allCases)
    func onlyWhenItApplies(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let operation = RequestOperation(request: try TransferRequest.get(.bytes(1_000)), engine: engine)
            let probe = OperationProbe(operation)
            operation.pause()
            #expect(!operation.isPaused, "a ready operation does not pause")
            operation.resume()
            #expect(!operation.isExecuting, "resume does not start a ready operation")
            let gate = await ContextGate.hold(engine)
            defer { gate.release() }
            operation.start()
            operation.resume()
            #expect(operation.isExecuting && !operation.isPaused, "resume does nothing to an executing operation")
            operation.cancel()
            operation.pause()
            #expect(!operation.isPaused, "a cancelled operation does not pause")
            gate.release()
            await probe.expectFinishedOnce()
            operation.pause()
            operation.resume()
            #expect(!operation.isPaused && operation.isFinished)
            #expect(!probe.record.value.notifications.contains(RequestOperation.didPauseNotification))
        }
    }
}
