import CurlewTestServer
import CurlewTransport
import Testing

extension TransferEngine {
    /// Waits until the engine has `count` connection sockets open; records what it saw if not.
    public func waitForOpenSockets(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
        let last = Locked<EngineDiagnostics?>(nil)
        let reached = await waitUntil {
            let diagnostics = await self.diagnostics()
            last.set(diagnostics)
            return diagnostics.openSockets == count
        }
        #expect(reached, "expected \(count) open sockets, last saw \(String(describing: last.value))",
                sourceLocation: sourceLocation)
    }

    /// A barrier before counting "exactly once": runs one more small transfer on this engine to its
    /// end. Its completion passed through the same context after everything the context had queued
    /// before, so a late second completion of an earlier transfer would have been delivered by now.
    ///
    /// The settling transfer may fail — with a two-second total timeout, when every connection the
    /// engine may open to the server is taken — and is a barrier all the same: its completion is what
    /// counts.
    ///
    /// ```swift
    /// _ = await recorder.result()
    /// await engine.settle()
    /// #expect(recorder.completionCount == 1)
    /// ```
    public func settle(sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            let recorder = TransferRecorder(self)
            var request = TransferRequest(url: try testServer().url(.bytes(1)))
            request.options.timeout = .seconds(2)
            self.makeTransfer(request, delegate: recorder).start()
            #expect(await recorder.result(timeout: defaultTestTimeout) != nil, "the settling transfer never completed",
                    sourceLocation: sourceLocation)
        } catch {
            Issue.record(error, "no settling transfer", sourceLocation: sourceLocation)
        }
        _ = await self.diagnostics()
    }

    /// Checks that the cancelled transfers tagged `tag` really stopped: none is live in the engine,
    /// and every request of theirs that reached the shared test server was abandoned by the client,
    /// none answered.
    public func expectStopped(tag: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let server = try testServer()
        #expect(await waitUntil { await self.diagnostics().liveTransfers == 0 }, "a cancelled transfer is still live",
                sourceLocation: sourceLocation)
        #expect(await waitUntil { server.requests(tagged: tag).allSatisfy { $0.outcome == .abandoned } },
                "the server's view: \(server.requests(tagged: tag))", sourceLocation: sourceLocation)
    }
}
