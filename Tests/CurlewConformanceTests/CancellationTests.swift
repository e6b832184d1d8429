import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Dispatch
import Foundation
import Testing

/// Cancel at every moment: each transfer completes exactly once, with a cancellation error that
/// carries the URL.
@Suite("Cancellation")
struct CancellationTests {
    private func expectCancelled(_ recorder: TransferRecorder, url: URL) async throws {
        let result = try #require(await recorder.result())
        guard case .failure(let error) = result else {
            Issue.record("expected a cancellation, got \(result)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(error.failingURL == url)
        #expect(error.urlError.code == .cancelled)
    }

    @Test("before start", arguments: BackendConfiguration.allCases)
    func beforeStart(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().url(.bytes(10))
            let recorder = TransferRecorder(engine)
            let transfer = engine.makeTransfer(TransferRequest(url: url), delegate: recorder)
            transfer.cancel()
            transfer.start()
            try await self.expectCancelled(recorder, url: url)
            _ = await engine.diagnostics()  // Every submitted command has run.
            #expect(recorder.completionCount == 1)
            #expect(recorder.events.value.heads.isEmpty)
        }
    }

    @Test("never started", arguments: BackendConfiguration.allCases)
    func neverStarted(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().url(.bytes(10))
            let recorder = TransferRecorder(engine)
            engine.makeTransfer(TransferRequest(url: url), delegate: recorder).cancel()
            try await self.expectCancelled(recorder, url: url)
        }
    }

    @Test("while connecting", arguments: BackendConfiguration.allCases)
    func whileConnecting(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().blackholeURL
            var request = TransferRequest(url: url)
            request.options.connectTimeout = .seconds(60)
            let recorder = TransferRecorder(engine)
            let transfer = engine.makeTransfer(request, delegate: recorder)
            transfer.start()
            // The connect is under way once curl has opened its socket.
            await engine.waitForOpenSockets(1)
            transfer.cancel()
            try await self.expectCancelled(recorder, url: url)
            await engine.waitForOpenSockets(0)
        }
    }

    @Test("mid-body", arguments: BackendConfiguration.allCases)
    func midBody(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().url(.drip(bytes: 100_000, chunks: 20, intervalMilliseconds: 100))
            let recorder = TransferRecorder(engine, onProgress: { transfer, _ in transfer.cancel() })
            engine.makeTransfer(TransferRequest(url: url), delegate: recorder).start()
            try await self.expectCancelled(recorder, url: url)
            let received = recorder.events.value.progress.last?.bytesReceived ?? 0
            #expect(received > 0 && received < 100_000)
            #expect(recorder.events.value.heads.count == 1)
        }
    }

    /// A cancel from a delegate callback acts before curl hands over another byte, even when the
    /// rest of the body is already waiting in the socket (a 4 MB body sent at once).
    @Test("from a delegate callback: not one more body callback", arguments: BackendConfiguration.allCases)
    func fromCallback(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().url(.bytes(4_000_000))
            let recorder = TransferRecorder(engine, onProgress: { transfer, _ in transfer.cancel() })
            engine.makeTransfer(TransferRequest(url: url), delegate: recorder).start()
            try await self.expectCancelled(recorder, url: url)
            #expect(recorder.events.value.progress.count == 1, "no progress after the cancel")
        }
    }

    @Test("twice, and after finishing", arguments: BackendConfiguration.allCases)
    func twiceAndAfterFinish(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let recorder = TransferRecorder(engine)
            let transfer = engine.makeTransfer(try .get(.bytes(100)), delegate: recorder)
            transfer.start()
            #expect(try await recorder.result()?.get().body?.count == 100)
            transfer.cancel()
            transfer.cancel()
            transfer.pause()
            transfer.resume()
            transfer.start()
            _ = await engine.diagnostics()
            #expect(recorder.completionCount == 1)
        }
    }

    @Test("from many threads at once", arguments: BackendConfiguration.allCases)
    func fromManyThreads(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().url(.drip(bytes: 1000, chunks: 10, intervalMilliseconds: 50))
            let recorders = (0..<64).map { _ in TransferRecorder(engine) }
            let transfers = recorders.map { engine.makeTransfer(TransferRequest(url: url), delegate: $0) }
            transfers.forEach { $0.start() }
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                transfers.forEach { $0.cancel() }
            }
            #expect(await waitUntil { recorders.allSatisfy { $0.completionCount > 0 } })
            _ = await engine.diagnostics()
            for recorder in recorders {
                #expect(recorder.completionCount == 1)
            }
        }
    }

    @Test("cancelling the awaiting task", arguments: BackendConfiguration.allCases)
    func taskCancellation(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let request = try TransferRequest.get(.delay(30_000))
            let task = Task { try await engine.execute(request) }
            await engine.waitForOpenSockets(1)
            task.cancel()
            let error = await #expect(throws: TransferError.self) { try await task.value }
            #expect(error?.code == .cancelled)
        }
    }

    @Test("shutting the engine down cancels what runs", arguments: BackendConfiguration.allCases)
    func shutdownCancels(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeScheduler())
        let recorder = TransferRecorder(engine)
        engine.makeTransfer(try .get(.delay(30_000)), delegate: recorder).start()
        await engine.waitForOpenSockets(1)
        await engine.shutdown()
        let result = try #require(await recorder.result())
        #expect(throws: TransferError.self) { try result.get() }
        let after = await engine.diagnostics()
        #expect(after.openSockets == 0)
        #expect(after.scheduler == SchedulerDiagnostics())
        // Started after shutdown: fails at once, still exactly once.
        let late = TransferRecorder(engine)
        engine.makeTransfer(try .get(.bytes(1)), delegate: late).start()
        #expect(try #require(await late.result()).isFailure)
    }
}

extension Result {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
