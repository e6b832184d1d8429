import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// Transfers beyond a host's connection limit wait in the engine (not in curl's pending list),
/// first come first served; a waiting transfer can be cancelled, paused, resumed and timed out.
@Suite("Concurrency: the engine's per-host queue")
struct ConnectionQueueTests {
    /// Records the order in which transfers complete, by a label.
    final class CompletionOrder: Sendable {
        let labels = Locked<[Int]>([])

        func delegate(_ label: Int, _ recorder: TransferRecorder) -> Labelled {
            Labelled(label: label, order: self, recorder: recorder)
        }

        final class Labelled: TransferDelegate, Sendable {
            let label: Int
            let order: CompletionOrder
            let recorder: TransferRecorder

            init(label: Int, order: CompletionOrder, recorder: TransferRecorder) {
                self.label = label
                self.order = order
                self.recorder = recorder
            }

            func transferDidPause(_ transfer: Transfer) {
                self.recorder.transferDidPause(transfer)
            }

            func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
                self.order.labels.withLock { $0.append(self.label) }
                self.recorder.transfer(transfer, didCompleteWith: result)
            }
        }
    }

    /// One connection, held by a response that does not come until `body` has returned; then every
    /// transfer still queued runs to its end.
    private func withOneBusyConnection(
        _ backend: BackendConfiguration,
        _ body: (TransferEngine, TestServer) async throws -> Void
    ) async throws {
        try await withEngine(backend, configure: { $0.maximumConnectionsPerHost = 1 }) { engine in
            let server = try testServer()
            let (held, holder) = await self.holdTheConnection(engine, server)
            try await body(engine, server)
            held.cancel()
            #expect(await holder.result() != nil)
            #expect(await waitUntil { await engine.diagnostics().liveTransfers == 0 }, "the queued transfers never ran")
        }
    }

    /// Starts a transfer whose response does not come for two minutes and waits until it holds the
    /// engine's one connection; cancelling it gives the connection back.
    private func holdTheConnection(_ engine: TransferEngine, _ server: TestServer) async -> (Transfer, TransferRecorder) {
        let holder = TransferRecorder(engine)
        let held = engine.makeTransfer(TransferRequest(url: server.url(.delay(120_000))), delegate: holder)
        held.start()
        await engine.waitForOpenSockets(1)
        return (held, holder)
    }

    private func waitForWaiting(_ engine: TransferEngine, _ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
        let reached = await waitUntil { await engine.diagnostics().transfersWaitingForConnection == count }
        let seen = await engine.diagnostics().transfersWaitingForConnection
        #expect(reached, "expected \(count) transfers waiting for a connection, saw \(seen)", sourceLocation: sourceLocation)
    }

    @Test("beyond the limit, transfers wait in the engine and run in the order they started",
          arguments: BackendConfiguration.allCases)
    func firstComeFirstServed(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: { $0.maximumConnectionsPerHost = 1 }) { engine in
            let server = try testServer()
            let (held, _) = await self.holdTheConnection(engine, server)
            let order = CompletionOrder()
            let recorders = (0..<6).map { _ in TransferRecorder(engine) }
            for (label, recorder) in recorders.enumerated() {
                engine.makeTransfer(TransferRequest(url: server.url(.bytes(100 + label))),
                                    delegate: order.delegate(label, recorder)).start()
            }
            await self.waitForWaiting(engine, 6)
            #expect(recorders.allSatisfy { $0.completionCount == 0 })
            held.cancel()
            #expect(await waitUntil { recorders.allSatisfy { $0.completionCount == 1 } })
            #expect(order.labels.value == Array(0..<6), "one connection serves the queue in order")
            for (label, recorder) in recorders.enumerated() {
                #expect(try recorder.events.value.completions.first?.get().body?.count == 100 + label)
            }
            #expect(await engine.diagnostics().transfersWaitingForConnection == 0)
        }
    }

    @Test("a waiting transfer cancelled leaves the queue at once; the others keep their turn",
          arguments: BackendConfiguration.allCases)
    func cancelWhileWaiting(_ backend: BackendConfiguration) async throws {
        try await self.withOneBusyConnection(backend) { engine, server throws in
            let recorders = (0..<3).map { _ in TransferRecorder(engine) }
            let transfers = recorders.map { engine.makeTransfer(TransferRequest(url: server.url(.bytes(10))), delegate: $0) }
            for transfer in transfers { transfer.start() }
            await self.waitForWaiting(engine, 3)
            transfers[1].cancel()
            let cancelled = try #require(await recorders[1].result())
            #expect(cancelled.failure?.code == .cancelled)
            await self.waitForWaiting(engine, 2)
            #expect(recorders[0].completionCount == 0 && recorders[2].completionCount == 0)
        }
    }

    /// Cancels another transfer when its own transfer completes, on the engine's context.
    final class CancelsAnother: TransferDelegate, Sendable {
        let victim = Locked<Transfer?>(nil)
        let recorder: TransferRecorder

        init(_ recorder: TransferRecorder) {
            self.recorder = recorder
        }

        func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
            self.victim.value?.cancel()
            self.recorder.transfer(transfer, didCompleteWith: result)
        }
    }

    /// The transfer that ends gives its slot to the next in line before its delegate hears of the
    /// end; a cancel from that delegate comes before the next one has started, and it never starts.
    @Test("a transfer cancelled as its turn comes never reaches the server; the one behind it runs",
          arguments: BackendConfiguration.allCases)
    func cancelAsTurnComes(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: { $0.maximumConnectionsPerHost = 1 }) { engine in
            let server = try testServer()
            let (held, _) = await self.holdTheConnection(engine, server)
            let tag = UUID().uuidString
            let first = CancelsAnother(TransferRecorder(engine))
            let victim = TransferRecorder(engine)
            let last = TransferRecorder(engine)
            let transfers = [
                engine.makeTransfer(TransferRequest(url: server.url(.bytes(10))), delegate: first),
                engine.makeTransfer(TransferRequest(url: server.url(.bytes(20))).tagged(tag), delegate: victim),
                engine.makeTransfer(TransferRequest(url: server.url(.bytes(30))), delegate: last),
            ]
            first.victim.withLock { $0 = transfers[1] }
            for transfer in transfers { transfer.start() }
            await self.waitForWaiting(engine, 3)
            held.cancel()
            #expect(try #require(await first.recorder.result()).get().body?.count == 10)
            #expect(await victim.result()?.failure?.code == .cancelled)
            #expect(try #require(await last.result()).get().body?.count == 30)
            #expect(server.requests(tagged: tag).isEmpty, "the transfer cancelled as its turn came reached the server")
            #expect(await waitUntil { await engine.diagnostics().liveTransfers == 0 })
            #expect(victim.completionCount == 1)
        }
    }

    @Test("a waiting transfer paused leaves the queue, and resumed joins it again", arguments: BackendConfiguration.allCases)
    func pauseWhileWaiting(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: { $0.maximumConnectionsPerHost = 1 }) { engine in
            let server = try testServer()
            let (held, holder) = await self.holdTheConnection(engine, server)
            let recorder = TransferRecorder(engine)
            let waiting = engine.makeTransfer(TransferRequest(url: server.url(.bytes(1000))), delegate: recorder)
            waiting.start()
            await self.waitForWaiting(engine, 1)
            waiting.pause()
            #expect(await waitUntil { recorder.events.value.pauses == 1 })
            await self.waitForWaiting(engine, 0)
            waiting.resume()
            await self.waitForWaiting(engine, 1)
            held.cancel()
            #expect(try #require(await recorder.result()).get().body?.count == 1000)
            #expect(await holder.result() != nil)
        }
    }

    @Test("another host's transfers do not wait behind a full queue", arguments: BackendConfiguration.allCases)
    func otherHostsDoNotWait(_ backend: BackendConfiguration) async throws {
        try await self.withOneBusyConnection(backend) { engine, server in
            let queued = TransferRecorder(engine)
            engine.makeTransfer(TransferRequest(url: server.url(.bytes(10))), delegate: queued).start()
            await self.waitForWaiting(engine, 1)
            // The fault listener is another port, so another host for connection limits.
            let other = try #require(await TransferRecorder(engine).run(on: engine, server.faultURL(.emptyReply)))
            #expect(other.failure != nil, "the fault listener answers with an empty reply")
            #expect(queued.completionCount == 0)
        }
    }

    /// The limit of the queue is per connection: HTTP/2 streams that may share one connection are
    /// not held back at the per-host connection limit.
    @Test("https transfers that may share a connection are not queued at the connection limit",
          arguments: BackendConfiguration.allCases)
    func multiplexedNotQueued(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: { $0.maximumConnectionsPerHost = 1 }) { engine in
            let server = try testServer()
            let recorders = (0..<8).map { _ in TransferRecorder(engine) }
            for recorder in recorders {
                engine.makeTransfer(TransferRequest(url: server.url(.delay(500), tls: true), options: TransferOptions.trustingTestCA),
                                    delegate: recorder).start()
            }
            #expect(await engine.diagnostics().transfersWaitingForConnection == 0)
            #expect(await waitUntil { recorders.allSatisfy { $0.completionCount == 1 } })
            for recorder in recorders {
                #expect(try recorder.events.value.completions.first?.get().metrics.httpVersion == .http2)
            }
        }
    }

    /// Beyond the streams of its connections, an HTTP/2 transfer waits too, and a stream given back
    /// passes to the next in line.
    @Test("https transfers beyond the streams of the per-host connections wait, and take the streams given back",
          arguments: BackendConfiguration.allCases)
    func multiplexedQueuedBeyondStreams(_ backend: BackendConfiguration) async throws {
        try #require(LibCurl.supportsHTTP2)
        try await withEngine(backend, configure: {
            $0.maximumConnectionsPerHost = 1
            $0.maximumStreamsPerConnection = 2
        }) { engine in
            #expect(try await engine.fetch(try .get(.bytes(1), tls: true)).metrics.httpVersion == .http2)
            // Two streams that get no answer take both places; three more transfers wait.
            let holders = (0..<2).map { _ in TransferRecorder(engine) }
            let held = try holders.map { engine.makeTransfer(try .get(.delay(120_000), tls: true), delegate: $0) }
            for transfer in held { transfer.start() }
            let recorders = (0..<3).map { _ in TransferRecorder(engine) }
            for (index, recorder) in recorders.enumerated() {
                engine.makeTransfer(try .get(.bytes(100 + index), tls: true), delegate: recorder).start()
            }
            await self.waitForWaiting(engine, 3)
            // One stream given back: the waiting transfers run through it one after another.
            held[0].cancel()
            for (index, recorder) in recorders.enumerated() {
                let response = try #require(await recorder.result()).get()
                #expect(response.body == Data(TestServer.expectedBody(count: 100 + index)))
                #expect(response.metrics.httpVersion == .http2)
            }
            #expect(holders[1].completionCount == 0, "the other stream still runs")
            held[1].cancel()
            #expect(await holders[1].result()?.failure?.code == .cancelled)
        }
    }
}

private extension TransferRecorder {
    /// Starts a GET of `url` with this recorder and waits for its completion.
    func run(on engine: TransferEngine, _ url: URL) async -> Result<TransferResponse, TransferError>? {
        engine.makeTransfer(TransferRequest(url: url), delegate: self).start()
        return await self.result()
    }
}
