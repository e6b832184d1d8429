import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Dispatch
import Foundation
import Testing

/// Cancel at every moment: each transfer completes exactly once, with a cancellation error that
/// carries the URL — and it really stopped: the engine holds it no more, and the server saw the
/// client leave (or never saw the request). Where a cancel must beat an answer, the server would
/// answer only after two minutes, far beyond every wait here, so a cancel that does nothing fails the
/// test instead of passing late.
@Suite("Cancellation")
struct CancellationTests {
    /// Longer than any wait in this suite: a transfer of `.delay(neverAnswered)` (without an idle
    /// timeout, see ``waitingForever(_:)``) completes only if it is cancelled.
    static let neverAnswered = 120_000

    /// `request` without the idle timeout, which would otherwise end a silent transfer after 60 s.
    private static func waitingForever(_ request: TransferRequest) -> TransferRequest {
        var request = request
        request.options.idleTimeout = nil
        return request
    }

    private func expectCancelled(_ recorder: TransferRecorder, url: URL) async throws {
        let result = try #require(await recorder.result(timeout: defaultTestTimeout))
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
            let tag = UUID().uuidString
            let recorder = TransferRecorder(engine)
            let transfer = engine.makeTransfer(TransferRequest(url: url).tagged(tag), delegate: recorder)
            transfer.cancel()
            transfer.start()
            try await self.expectCancelled(recorder, url: url)
            await engine.settle()
            #expect(recorder.completionCount == 1)
            #expect(recorder.events.value.heads.isEmpty)
            #expect(try testServer().requests(tagged: tag).isEmpty, "a transfer cancelled before it started reached the server")
        }
    }

    @Test("never started", arguments: BackendConfiguration.allCases)
    func neverStarted(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().url(.bytes(10))
            let tag = UUID().uuidString
            let recorder = TransferRecorder(engine)
            engine.makeTransfer(TransferRequest(url: url).tagged(tag), delegate: recorder).cancel()
            try await self.expectCancelled(recorder, url: url)
            await engine.settle()
            #expect(recorder.completionCount == 1)
            #expect(try testServer().requests(tagged: tag).isEmpty)
        }
    }

    /// The connect never completes (the blackhole) and would time out only after ten minutes.
    @Test("while connecting", arguments: BackendConfiguration.allCases)
    func whileConnecting(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().blackholeURL
            var request = TransferRequest(url: url)
            request.options.connectTimeout = .seconds(600)
            let recorder = TransferRecorder(engine)
            let transfer = engine.makeTransfer(request, delegate: recorder)
            transfer.start()
            // The connect is under way once curl has opened its socket.
            await engine.waitForOpenSockets(1)
            transfer.cancel()
            try await self.expectCancelled(recorder, url: url)
            await engine.waitForOpenSockets(0)
            #expect(await engine.diagnostics().liveTransfers == 0)
        }
    }

    @Test("mid-body", arguments: BackendConfiguration.allCases)
    func midBody(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().url(.drip(bytes: 100_000, chunks: 20, intervalMilliseconds: 100))
            let tag = UUID().uuidString
            let recorder = TransferRecorder(engine, onProgress: { transfer, _ in transfer.cancel() })
            engine.makeTransfer(TransferRequest(url: url).tagged(tag), delegate: recorder).start()
            try await self.expectCancelled(recorder, url: url)
            let received = recorder.events.value.progress.last?.bytesReceived ?? 0
            #expect(received > 0 && received < 100_000)
            #expect(recorder.events.value.heads.count == 1)
            try await engine.expectStopped(tag: tag)
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
            await engine.settle()
            #expect(recorder.completionCount == 1)
        }
    }

    /// 64 transfers whose answers never come in time, each cancelled from eight threads at once:
    /// each completes once, cancelled, and none is left on the engine or the server.
    @Test("from many threads at once", arguments: BackendConfiguration.allCases)
    func fromManyThreads(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().url(.delay(Self.neverAnswered))
            let tag = UUID().uuidString
            let recorders = (0..<64).map { _ in TransferRecorder(engine) }
            let request = Self.waitingForever(TransferRequest(url: url).tagged(tag))
            let transfers = recorders.map { engine.makeTransfer(request, delegate: $0) }
            transfers.forEach { $0.start() }
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                transfers.forEach { $0.cancel() }
            }
            #expect(await waitUntil { recorders.allSatisfy { $0.completionCount > 0 } }, "not every transfer completed")
            try await engine.expectStopped(tag: tag)
            await engine.waitForOpenSockets(0)
            await engine.settle()
            for recorder in recorders {
                #expect(recorder.completionCount == 1)
                #expect(recorder.events.value.completions.first.flatMap { try? $0.get() } == nil, "a cancelled transfer succeeded")
                if case .failure(let error)? = recorder.events.value.completions.first {
                    #expect(error.code == .cancelled && error.failingURL == url, "\(error)")
                }
            }
        }
    }

    @Test("cancelling the awaiting task", arguments: BackendConfiguration.allCases)
    func taskCancellation(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let server = try testServer()
            let tag = UUID().uuidString
            let request = Self.waitingForever(try TransferRequest.get(.delay(Self.neverAnswered)).tagged(tag))
            let task = Task { try await engine.execute(request) }
            #expect(await waitUntil { server.requests(tagged: tag).count == 1 }, "the request never reached the server")
            task.cancel()
            switch try await bounded(by: .seconds(30), { await task.result }) {
            case .success(let response):
                Issue.record("the cancelled task got a response: \(response.head.status)")
            case .failure(let error):
                #expect((error as? TransferError)?.code == .cancelled, "\(error)")
            }
            try await engine.expectStopped(tag: tag)
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
