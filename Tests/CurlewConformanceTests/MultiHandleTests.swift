import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// Beyond ``TransferEngine/Configuration/transfersPerMultiHandle`` transfers, the engine spreads its
/// load over more libcurl multi handles: every handle's sockets and timer must be driven, and
/// connections must still be reused, in the handle that holds them.
@Suite("Concurrency: more than one multi handle", .serialized)
struct MultiHandleTests {
    /// Two transfers per multi handle, at most three handles.
    private static func smallHandles(_ configuration: inout TransferEngine.Configuration) {
        configuration.transfersPerMultiHandle = 2
        configuration.maximumMultiHandles = 3
    }

    /// `count` transfers that get no answer, started, once their connections are open: each holds a
    /// place in its multi handle until cancelled.
    private static func startHeld(_ count: Int, on engine: TransferEngine, server: TestServer) async -> (transfers: [Transfer], recorders: [TransferRecorder]) {
        let recorders = (0..<count).map { _ in TransferRecorder(engine) }
        let transfers = recorders.map { engine.makeTransfer(TransferRequest(url: server.url(.delay(120_000))), delegate: $0) }
        for transfer in transfers { transfer.start() }
        await engine.waitForOpenSockets(count)
        return (transfers, recorders)
    }

    @Test("a load beyond one handle's share opens more handles, and transfers on each complete",
          arguments: BackendConfiguration.allCases)
    func spreadsOverHandles(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: Self.smallHandles) { engine in
            let server = try testServer()
            // Five transfers that get no answer: two in each of the first two handles, one in the third.
            let (held, holders) = await Self.startHeld(5, on: engine, server: server)
            #expect(await engine.diagnostics().multiHandles == 3)

            // More transfers go to the handles with the fewest: every handle must start them (curl's
            // timer of that handle) and read their responses (its sockets).
            let recorders = (0..<6).map { _ in TransferRecorder(engine) }
            for (index, recorder) in recorders.enumerated() {
                engine.makeTransfer(TransferRequest(url: server.url(.bytes(100 + index))), delegate: recorder).start()
            }
            #expect(await waitUntil { recorders.allSatisfy { $0.completionCount == 1 } })
            for (index, recorder) in recorders.enumerated() {
                let body = try recorder.events.value.completions.first?.get().body
                #expect(body == Data(TestServer.expectedBody(count: 100 + index)))
            }

            // A transfer's timeout still comes while the load is spread.
            var timed = TransferRequest(url: server.url(.delay(120_000)))
            timed.options.timeout = .milliseconds(300)
            #expect(try await engine.failure(timed).code == .timedOut)

            for transfer in held { transfer.cancel() }
            for holder in holders {
                #expect(await holder.result()?.failure?.code == .cancelled)
            }
            let diagnostics = await engine.diagnostics()
            #expect(diagnostics.multiHandles == 3, "never more than the maximum")
            #expect(await waitUntil { await engine.diagnostics().liveTransfers == 0 })
        }
    }

    @Test("a transfer goes to the handle that holds an idle connection to its host, and reuses it",
          arguments: BackendConfiguration.allCases)
    func followsIdleConnection(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: Self.smallHandles) { engine in
            let server = try testServer()
            // Four transfers without an answer fill the first two handles; two more go to the third.
            let (held, holders) = await Self.startHeld(4, on: engine, server: server)
            let recorders = (0..<2).map { _ in TransferRecorder(engine) }
            for recorder in recorders {
                engine.makeTransfer(TransferRequest(url: server.url(.bytes(100))), delegate: recorder).start()
            }
            #expect(await waitUntil { recorders.allSatisfy { $0.completionCount == 1 } })
            #expect(await engine.diagnostics().multiHandles == 3)
            for transfer in held { transfer.cancel() }
            #expect(await waitUntil { holders.allSatisfy { $0.completionCount == 1 } })

            // Every handle is empty now. The least busy would be the first, which has no connection
            // left; the third has the idle ones.
            var opened: [Int] = []
            for _ in 0..<3 {
                opened.append(try await engine.fetch(TransferRequest(url: server.url(.bytes(100)))).metrics.connectionsOpened)
            }
            #expect(opened == [0, 0, 0], "connections opened per transfer: \(opened)")
            // Readiness of a later handle's socket goes to that handle. (Sent to another, curl ignores
            // it: the socket stays ready and is reported again and again, and only curl's timer, now
            // and then, moves the transfer on.)
            let actions = await engine.diagnostics().socketActions
            #expect(actions < 200, "\(actions) socket actions for nine transfers: readiness went to the wrong handle")
        }
    }

    @Test("waves of transfers spread over handles open no more connections than run at once",
          arguments: BackendConfiguration.allCases)
    func reusesConnectionsAcrossHandles(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: Self.smallHandles) { engine in
            let server = try testServer()
            var openedPerWave: [Int] = []
            for _ in 0..<4 {
                let recorders = (0..<6).map { _ in TransferRecorder(engine) }
                for recorder in recorders {
                    engine.makeTransfer(TransferRequest(url: server.url(.bytes(100))), delegate: recorder).start()
                }
                #expect(await waitUntil { recorders.allSatisfy { $0.completionCount == 1 } })
                let opened = recorders.compactMap { try? $0.events.value.completions.first?.get().metrics.connectionsOpened }
                #expect(opened.count == 6)
                openedPerWave.append(opened.reduce(0, +))
            }
            #expect(openedPerWave.reduce(0, +) <= 6, "connections opened per wave of six: \(openedPerWave)")
            #expect(await engine.diagnostics().openSockets == openedPerWave.reduce(0, +))
        }
    }

    @Test("transfers that may share an HTTP/2 connection stay in the first handle, within the per-host limit",
          arguments: BackendConfiguration.allCases)
    func multiplexingStaysInFirstHandle(_ backend: BackendConfiguration) async throws {
        try #require(LibCurl.supportsHTTP2)
        try await withEngine(backend, configure: Self.smallHandles) { engine in
            let server = try testServer()
            #expect(try await engine.fetch(try .get(.bytes(1), tls: true)).metrics.httpVersion == .http2)
            let recorders = (0..<12).map { _ in TransferRecorder(engine) }
            for recorder in recorders {
                engine.makeTransfer(try .get(.drip(bytes: 1000, chunks: 2, intervalMilliseconds: 50), tls: true),
                                    delegate: recorder).start()
            }
            #expect(await waitUntil(timeout: .seconds(60)) { recorders.allSatisfy { $0.completionCount == 1 } })
            let responses = try recorders.map { try #require($0.events.value.completions.first).get() }
            #expect(responses.allSatisfy { $0.body == Data(TestServer.expectedBody(count: 1000)) })
            #expect(responses.map(\.metrics.connectionsOpened).reduce(0, +) == 0, "a new connection was opened")
            #expect(await engine.diagnostics().multiHandles == 1)
            _ = server
        }
    }

    @Test("one multi handle when told so, or when a total connection limit is set",
          arguments: BackendConfiguration.allCases)
    func oneHandleWhenLimited(_ backend: BackendConfiguration) async throws {
        for configure in [{ (configuration: inout TransferEngine.Configuration) in
                              Self.smallHandles(&configuration)
                              configuration.maximumMultiHandles = 1
                          },
                          { (configuration: inout TransferEngine.Configuration) in
                              Self.smallHandles(&configuration)
                              configuration.maximumConnections = 8
                          }] {
            try await withEngine(backend, configure: configure) { engine in
                let server = try testServer()
                let (transfers, recorders) = await Self.startHeld(6, on: engine, server: server)
                #expect(await engine.diagnostics().multiHandles == 1)
                for transfer in transfers { transfer.cancel() }
                #expect(await waitUntil { recorders.allSatisfy { $0.completionCount == 1 } })
            }
        }
    }
}
