import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

@Suite("Concurrency and connections", .serialized)
struct ConcurrencyTests {
    @Test("1,000 concurrent transfers all complete", arguments: BackendConfiguration.allCases)
    func thousandConcurrent(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: { $0.maximumConnectionsPerHost = 64 }) { engine in
            let server = try testServer()
            let recorders = (0..<1000).map { _ in TransferRecorder(engine) }
            for (index, recorder) in recorders.enumerated() {
                engine.makeTransfer(TransferRequest(url: server.url(.bytes(index % 7 * 100))), delegate: recorder).start()
            }
            #expect(await waitUntil(timeout: .seconds(120)) { recorders.allSatisfy { $0.completionCount > 0 } })
            for (index, recorder) in recorders.enumerated() {
                #expect(recorder.completionCount == 1)
                let body = try recorder.events.value.completions.first?.get().body
                #expect(body == Data(TestServer.expectedBody(count: index % 7 * 100)))
            }
            let diagnostics = await engine.diagnostics()
            #expect(diagnostics.liveTransfers == 0)
            #expect(diagnostics.scheduler.armedSockets == 0, "watches still armed after every transfer ended")
        }
    }

    @Test("sequential transfers reuse one connection", arguments: BackendConfiguration.allCases)
    func connectionReuse(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let server = try testServer()
            var opened: [Int] = []
            for _ in 0..<10 {
                opened.append(try await engine.fetch(TransferRequest(url: server.url(.bytes(100)))).metrics.connectionsOpened)
            }
            #expect(opened.first == 1)
            #expect(opened.dropFirst().allSatisfy { $0 == 0 }, "connections opened per transfer: \(opened)")
            let diagnostics = await engine.diagnostics()
            #expect(diagnostics.openSockets == 1)
            #expect(diagnostics.scheduler.watchedSockets == 1)
            #expect(diagnostics.scheduler.armedSockets == 0)
        }
    }

    @Test("the per-host connection limit holds", arguments: BackendConfiguration.allCases)
    func perHostLimit(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: { $0.maximumConnectionsPerHost = 2 }) { engine in
            let server = try testServer()
            let recorders = (0..<12).map { _ in TransferRecorder(engine) }
            for recorder in recorders {
                engine.makeTransfer(TransferRequest(url: server.url(.delay(20))), delegate: recorder).start()
            }
            #expect(await waitUntil(timeout: .seconds(60)) { recorders.allSatisfy { $0.completionCount == 1 } })
            let opened = recorders.compactMap { try? $0.events.value.completions.first?.get().metrics.connectionsOpened }
            #expect(opened.count == 12)
            #expect(opened.reduce(0, +) <= 2, "more than 2 connections were opened: \(opened)")
            #expect(await engine.diagnostics().openSockets <= 2)
        }
    }
}

/// Transfers to one host must not wait for each other where they cannot share a connection, and
/// every timeout bounds its transfer whatever the others do.
@Suite("Concurrency: no transfer waits for another")
struct NoWaitingTests {
    /// With `CURLOPT_PIPEWAIT` on plain http, curl held every transfer started beside a first one
    /// until that first response ended (16 s for 10 small GETs beside a 16 s download).
    @Test("plain http: small GETs finish while a slow response to the same host is still pending",
          arguments: BackendConfiguration.allCases)
    func smallBesideSlow(_ backend: BackendConfiguration) async throws {
        try await self.smallBesideSlow(backend, tls: false)
    }

    /// Over TLS the first connection may negotiate h2, so transfers do wait for its handshake, then
    /// share it as streams: the slow response does not hold the small ones back.
    @Test("https: small GETs finish while a slow response to the same host is still pending",
          arguments: BackendConfiguration.allCases)
    func smallBesideSlowOverTLS(_ backend: BackendConfiguration) async throws {
        try await self.smallBesideSlow(backend, tls: true)
    }

    private func smallBesideSlow(_ backend: BackendConfiguration, tls: Bool) async throws {
        try await withEngine(backend) { engine in
            let server = try testServer()
            let options = tls ? TransferOptions.trustingTestCA : TransferOptions()
            let slow = TransferRecorder(engine)
            let slowTransfer = engine.makeTransfer(
                TransferRequest(url: server.url(.delay(120_000), tls: tls), options: options), delegate: slow)
            slowTransfer.start()
            let small = (0..<10).map { _ in TransferRecorder(engine) }
            for recorder in small {
                engine.makeTransfer(TransferRequest(url: server.url(.bytes(100), tls: tls), options: options),
                                    delegate: recorder).start()
            }
            #expect(await waitUntil(timeout: .seconds(60)) { small.allSatisfy { $0.completionCount == 1 } },
                    "the small transfers waited for the slow one")
            #expect(slow.completionCount == 0, "the slow response was expected to be still pending")
            for recorder in small {
                #expect(try recorder.events.value.completions.first?.get().body?.count == 100)
            }
            slowTransfer.cancel()
            #expect(try #require(await slow.result()).failure?.code == .cancelled)
        }
    }

    /// Transfers to a host that never accepts all try to connect at once (each in its own
    /// connection), rather than one after another behind the first.
    @Test("plain http: transfers to an unresponsive host connect side by side", arguments: BackendConfiguration.allCases)
    func connectSideBySide(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().blackholeURL
            let recorders = (0..<11).map { _ in TransferRecorder(engine) }
            let transfers = recorders.map { engine.makeTransfer(TransferRequest(url: url), delegate: $0) }
            for transfer in transfers { transfer.start() }
            await engine.waitForOpenSockets(11)
            for transfer in transfers { transfer.cancel() }
            #expect(await waitUntil { recorders.allSatisfy { $0.completionCount == 1 } })
        }
    }

    /// curl checks no timeout of a transfer waiting for a connection; the engine does.
    @Test("a total timeout bounds a transfer waiting behind the per-host limit", arguments: BackendConfiguration.allCases)
    func timeoutWhileWaitingForAConnection(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: { $0.maximumConnectionsPerHost = 1 }) { engine in
            let server = try testServer()
            let slow = TransferRecorder(engine)
            let slowTransfer = engine.makeTransfer(TransferRequest(url: server.url(.delay(120_000))), delegate: slow)
            slowTransfer.start()
            await engine.waitForOpenSockets(1)
            var waiting = TransferRequest(url: server.url(.bytes(10)))
            waiting.options.timeout = .milliseconds(500)
            let error = try await engine.failure(waiting)
            #expect(error.code == .timedOut, "\(error)")
            #expect(slow.completionCount == 0, "the slow response was expected to be still pending")
            slowTransfer.cancel()
            #expect(await slow.result() != nil)
        }
    }
}

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
