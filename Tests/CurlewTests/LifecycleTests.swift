import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// Cancellation of awaiting tasks, the task handle, downloads, shutdown and deinit, on every backend.
@Suite("RequestOperationManager: cancellation, tasks, shutdown")
struct LifecycleTests {
    @Test("cancelling the awaiting task cancels the transfer promptly, exactly once", arguments: BackendConfiguration.allCases)
    func cancelAwaitingTask(_ backend: BackendConfiguration) async throws {
        try await withSpiedManager(backend) { api, spy in
            let counts = spy.counts
            let started = ContinuousClock.now
            let task = Task { try await api.get(Route.delay(120_000).path, as: Echo.self) }
            #expect(await waitUntil { counts.value.starts == 1 }, "the transfer never started")
            task.cancel()
            let result = await task.result
            let elapsed = ContinuousClock.now - started
            guard case .failure(let error as TransferError) = result else {
                Issue.record("expected a cancellation, got \(result)")
                return
            }
            #expect(error.code == .cancelled)
            #expect(elapsed < .seconds(60), "the cancellation waited for the response: \(elapsed)")
            #expect(await waitUntil { counts.value.completions == 1 })
            #expect(await holdsThroughout(.milliseconds(100)) { counts.value == CountingTransport.Counts(made: 1, starts: 1, cancels: 1, completions: 1) },
                    "\(counts.value)")
        }
    }

    @Test("a task handle pauses, resumes and delivers the whole body; cancel makes value throw", arguments: BackendConfiguration.allCases)
    func taskHandle(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            // The server holds the first request of the tag after its first piece until the client
            // leaves, and the pause waits until the server has answered it: the pause lands mid-body
            // however loaded the machine (a 200 ms drip finished unseen twice under load; a 1.5 s drip
            // cost every run 3 s).
            let route = Route.entity(bytes: 300_000, dripChunkSize: 100_000, dripIntervalMilliseconds: 100, holdFirst: true)
            let tag = UUID().uuidString
            api.requestSerializer.defaultHeaders[try #require(HTTPField.Name(TestServer.tagHeaderName))] = tag
            let server = try testServer()
            let task = api.dataTask(.get, route.path, as: Data.self)
            #expect(await waitUntil { server.requests(tagged: tag).first?.status == 200 })
            #expect(task.state == .running)
            task.pause()
            #expect(task.state == .paused)
            task.resume()
            let reply = try await task.response
            #expect(Array(reply.value) == route.expectedBody)
            #expect(task.isFinished)
            #expect(reply.status.code == 200)
            let requests = server.requests(tagged: tag)
            #expect(requests.first?.outcome == .abandoned, "the pause released the connection mid-body: \(requests)")
            #expect(requests.count == 2)

            let slow = api.dataTask(.get, Route.delay(120_000).path, as: Data.self)
            slow.cancel()
            do {
                _ = try await slow.value
                Issue.record("a cancelled task produced a value")
            } catch let error as TransferError {
                #expect(error.code == .cancelled)
            }
        }
    }

    @Test("download streams into a file with progress; a refused status leaves no file", arguments: BackendConfiguration.allCases)
    func download(_ backend: BackendConfiguration) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withManager(backend) { api in
            let file = directory.appendingPathComponent("big.bin")
            let received = Locked<Int64>(0)
            let response = try await api.download(Route.bytes(1_000_000).path, to: file, progress: { progress in
                received.withLock { $0 = max($0, progress.bytesReceived) }
            })
            #expect(response.fileURL == file)
            #expect(try Array(Data(contentsOf: file)) == TestServer.expectedBody(count: 1_000_000))
            #expect(await waitUntil { received.value == 1_000_000 })

            let missing = directory.appendingPathComponent("missing.bin")
            await #expect(throws: ResponseSerializationError.self) { try await api.download("status/404", to: missing) }
            #expect(!FileManager.default.fileExists(atPath: missing.path))
        }
    }

    @Test("shutdown cancels every operation, each finishing once; later requests fail at once", arguments: BackendConfiguration.allCases)
    func shutdown(_ backend: BackendConfiguration) async throws {
        let api = RequestOperationManager(baseURL: try testServer().baseURL, backend: backend.backend)
        api.operationQueue.maxConcurrentOperationCount = 2
        let probes = (0..<4).map { _ in HandlerProbe() }
        for probe in probes {
            api.GET(Route.delay(120_000).path, success: probe.success, failure: probe.failure)
        }
        let paused = api.dataTask(.get, Route.delay(120_000).path, as: Data.self)
        #expect(await waitUntil { api.operationQueue.operations.filter(\.isExecuting).count == 2 })
        let started = ContinuousClock.now
        await api.shutdown()
        #expect(ContinuousClock.now - started < .seconds(60))
        for probe in probes {
            let record = await probe.waitForOneCall()
            #expect(record.failures == 1)
            #expect((record.error as? TransferError)?.code == .cancelled)
        }
        await #expect(throws: TransferError.self) { _ = try await paused.value }
        let engine = try #require(api.engine)
        #expect(await engine.diagnostics().openSockets == 0)

        let late = HandlerProbe()
        #expect(api.GET("echo", success: late.success, failure: late.failure) != nil)
        let record = await late.waitForOneCall()
        #expect((record.error as? TransferError)?.code == .cancelled)
    }

    @Test("a manager released while requests run cancels them, each finishing once", arguments: BackendConfiguration.allCases)
    func releasedManager(_ backend: BackendConfiguration) async throws {
        let probe = HandlerProbe()
        weak var weakManager: RequestOperationManager?
        var operation: RequestOperation?
        do {
            let api = RequestOperationManager(baseURL: try testServer().baseURL, backend: backend.backend)
            weakManager = api
            operation = api.GET(Route.delay(120_000).path, success: probe.success, failure: probe.failure)
            #expect(await waitUntil { operation?.isExecuting == true })
        }
        #expect(weakManager == nil, "the manager outlived its last reference")
        let record = await probe.waitForOneCall()
        #expect(record.failures == 1)
        #expect((record.error as? TransferError)?.code == .cancelled)
        #expect(operation?.isFinished == true)
    }
}
