import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import HTTPTypes
import Testing

/// Cancel at every moment: each operation finishes exactly once, with a cancellation error that
/// carries the failing URL when the cancel came before the finish, with its result otherwise.
///
/// An operation reports the cancellation error whenever it was cancelled before it finished, so the
/// error alone does not show that its transfer stopped. Where the transfer was under way, the
/// server's answer would come only after two minutes (and without an idle timeout), far beyond
/// every wait here: the operation can finish in time only because its transfer was cancelled, and
/// the engine and the server then confirm it (nothing live, the request abandoned by the client).
@Suite("RequestOperation: cancellation")
struct CancellationTests {
    /// A GET of `.delay(120_000)` without an idle timeout, tagged `tag`: it completes only if it is
    /// cancelled.
    static func neverAnswered(tag: String) throws -> TransferRequest {
        var request = try TransferRequest.get(.delay(120_000)).tagged(tag)
        request.options.idleTimeout = nil
        return request
    }

    @Test("before start: finishes when started, without a request", arguments: BackendConfiguration.allCases)
    func beforeStart(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let url = try testServer().url(.bytes(10))
            let tag = UUID().uuidString
            let operation = RequestOperation(request: TransferRequest(url: url).tagged(tag), engine: engine)
            let probe = OperationProbe(operation)
            operation.cancel()
            #expect(operation.isCancelled && !operation.isFinished && !operation.isExecuting)
            #expect(await holdsThroughout(.milliseconds(50)) { probe.handlerCalls == 0 }, "finished without being started")
            operation.start()
            #expect(operation.isFinished, "a cancelled operation finishes inside start()")
            let diagnostics = await engine.diagnostics()
            #expect(diagnostics.transfersCompleted == 0 && diagnostics.liveTransfers == 0, "a cancelled operation made a transfer")
            let record = await probe.expectFinishedOnce()
            #expect(record.failures == 1)
            #expect(probe.cancellation?.failingURL == url)
            #expect(record.notifications == [RequestOperation.didFinishNotification], "no did-start for an operation that never ran")
            #expect(try testServer().requests(tagged: tag).isEmpty, "a cancelled operation sent its request")
        }
    }

    /// Foundation's cancel clears the dependencies of an operation that has not started, so the
    /// queue starts it at once and it finishes, while its dependency is still running.
    @Test("before enqueue, with an unfinished dependency: the queue finishes it promptly", arguments: BackendConfiguration.allCases)
    func cancelledWithDependency(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let queue = OperationQueue()
            let gate = await ContextGate.hold(engine)
            defer { gate.release() }
            let dependency = RequestOperation(request: try TransferRequest.get(.bytes(10)), engine: engine)
            let cancelled = RequestOperation(request: try TransferRequest.get(.bytes(20)), engine: engine)
            cancelled.addDependency(dependency)
            let probes = [OperationProbe(dependency), OperationProbe(cancelled)]
            cancelled.cancel()
            queue.addOperation(cancelled)
            queue.addOperation(dependency)
            #expect(await probes[1].waitForEverything())
            #expect(!dependency.isFinished, "the dependency cannot finish while the context is held")
            gate.release()
            await probes[0].expectFinishedOnce()
            await probes[1].expectFinishedOnce()
            #expect(probes[1].cancellation != nil)
            #expect(dependency.responseData?.count == 10)
        }
    }

    /// The connect never completes (the blackhole) and would time out only after ten minutes: the
    /// operation finishes because the cancel closed the connecting socket.
    @Test("while connecting", arguments: BackendConfiguration.allCases)
    func whileConnecting(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let url = try testServer().blackholeURL
            var request = TransferRequest(url: url)
            request.options.connectTimeout = .seconds(600)
            let operation = RequestOperation(request: request, engine: engine)
            let probe = OperationProbe(operation)
            operation.start()
            await engine.waitForOpenSockets(1)
            operation.cancel()
            await engine.waitForOpenSockets(0)
            #expect(await engine.diagnostics().liveTransfers == 0)
            let record = await probe.expectFinishedOnce()
            #expect(record.failures == 1)
            #expect(probe.cancellation?.failingURL == url)
            #expect(operation.isCancelled)
        }
    }

    @Test("mid-body", arguments: BackendConfiguration.allCases)
    func midBody(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let url = try testServer().url(.drip(bytes: 100_000, chunks: 2, intervalMilliseconds: 120_000))
            let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
            let probe = OperationProbe(operation)
            let receivedAtCancel = Locked<Int64?>(nil)
            operation.progressQueue = DispatchQueue(label: "progress")  // serial: overcommit, never starved
            operation.downloadProgressHandler = { [weak operation] progress in
                guard progress.bytesReceived > 0, receivedAtCancel.value == nil else { return }
                receivedAtCancel.set(progress.bytesReceived)
                operation?.cancel()
            }
            operation.start()
            let record = await probe.expectFinishedOnce()
            let received = try #require(receivedAtCancel.value)
            #expect(received > 0 && received < 100_000)
            #expect(record.failures == 1)
            #expect(probe.cancellation?.failingURL == url)
            #expect(operation.response == nil)
        }
    }

    @Test("after finish: no effect", arguments: BackendConfiguration.allCases)
    func afterFinish(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let operation = RequestOperation(request: try TransferRequest.get(.bytes(10)), engine: engine)
            let probe = OperationProbe(operation)
            operation.start()
            _ = try await bounded { try await operation.responseObject() }
            operation.cancel()
            let record = await probe.expectFinishedOnce()
            #expect(record.successes == 1)
            #expect(!operation.isCancelled)
            #expect(operation.error == nil && operation.responseData?.count == 10)
        }
    }

    @Test("twice: one finish", arguments: BackendConfiguration.allCases)
    func twice(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let tag = UUID().uuidString
            let request = try Self.neverAnswered(tag: tag)
            let operation = RequestOperation(request: request, engine: engine)
            let probe = OperationProbe(operation)
            operation.start()
            let server = try testServer()
            #expect(await waitUntil { server.requests(tagged: tag).count == 1 }, "the request never reached the server")
            operation.cancel()
            operation.cancel()
            let record = await probe.expectFinishedOnce()
            #expect(record.failures == 1)
            #expect(probe.cancellation?.failingURL == request.url)
            operation.cancel()
            #expect(probe.handlerCalls == 1)
            try await engine.expectStopped(tag: tag)
        }
    }

    @Test("from many threads at once: one finish", arguments: BackendConfiguration.allCases)
    func fromManyThreads(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let tag = UUID().uuidString
            let request = try Self.neverAnswered(tag: tag)
            for _ in 0..<5 {
                let operation = RequestOperation(request: request, engine: engine)
                let probe = OperationProbe(operation)
                operation.start()
                let threads = (0..<16).map { _ in Thread { operation.cancel() } }
                for thread in threads { thread.start() }
                try #require(await probe.waitForEverything(timeout: .seconds(30)), "the operation did not finish: its transfer was not cancelled")
                let record = await probe.expectFinishedOnce()
                #expect(record.failures == 1)
                #expect(probe.cancellation?.failingURL == request.url)
            }
            try await engine.expectStopped(tag: tag)
        }
    }

    /// The seeds' race: the cancel arrives before the transfer exists on the context. Here the
    /// context is held, so both the transfer's start and its cancel are still queued when the
    /// operation is cancelled; they run in order, and the operation finishes once — in time only
    /// because the transfer was cancelled (its answer would take two minutes), and the server never
    /// answered it.
    @Test("before the transfer exists on the context", arguments: BackendConfiguration.allCases)
    func beforeTheTransferExists(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let tag = UUID().uuidString
            let request = try Self.neverAnswered(tag: tag)
            let url = request.url
            let operation = RequestOperation(request: request, engine: engine)
            let probe = OperationProbe(operation)
            let gate = await ContextGate.hold(engine)
            defer { gate.release() }
            operation.start()
            #expect(operation.isExecuting)
            operation.cancel()
            #expect(operation.isExecuting && operation.isCancelled && !operation.isFinished)
            gate.release()
            let record = await probe.expectFinishedOnce()
            #expect(record.failures == 1)
            #expect(probe.cancellation?.failingURL == url)
            try await engine.expectStopped(tag: tag)
        }
    }

    @Test("while paused: the operation finishes", arguments: BackendConfiguration.allCases)
    func whilePaused(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let url = try testServer().url(.drip(bytes: 100_000, chunks: 2, intervalMilliseconds: 120_000))
            var request = TransferRequest(url: url)
            request.options.idleTimeout = nil
            let operation = RequestOperation(request: request, engine: engine)
            let probe = OperationProbe(operation)
            operation.progressQueue = DispatchQueue(label: "progress")  // serial: overcommit, never starved
            operation.downloadProgressHandler = { [weak operation] progress in
                if progress.bytesReceived > 0 { operation?.pause() }
            }
            operation.start()
            #expect(await waitUntil { operation.isPaused })
            operation.cancel()
            let record = await probe.expectFinishedOnce()
            #expect(record.failures == 1)
            #expect(probe.cancellation?.failingURL == url)
            #expect(!operation.isPaused)
            #expect(await engine.diagnostics().liveTransfers == 0, "the paused transfer was not cancelled")
        }
    }

    /// A cancel that lands after the transfer completed but before the operation finished (its
    /// response being serialized) still wins: cancel before finish always means failure.
    @Test("while the response is being serialized: the cancel wins", arguments: BackendConfiguration.allCases)
    func whileSerializing(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let url = try testServer().url(.bytes(10))
            let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
            let serializer = BlockingSerializer()
            operation.responseSerializer = serializer
            let probe = OperationProbe(operation)
            operation.start()
            #expect(await waitUntil { serializer.entered.value })
            #expect(operation.isExecuting && !operation.isFinished)
            operation.cancel()
            serializer.release.signal()
            let record = await probe.expectFinishedOnce()
            #expect(record.failures == 1)
            #expect(probe.cancellation?.failingURL == url)
            #expect(operation.response?.head.status == .ok, "the response that arrived is kept")
            #expect(operation.responseObject == nil)
        }
    }
}

/// A serializer that waits (bounded) for the test's signal.
final class BlockingSerializer: ResponseSerializer {
    let entered = Locked(false)
    let release = DispatchSemaphore(value: 0)

    func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> (any Sendable)? {
        self.entered.set(true)
        _ = self.release.wait(timeout: .now() + 30)
        return body
    }
}
