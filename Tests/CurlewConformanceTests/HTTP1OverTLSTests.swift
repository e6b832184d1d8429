import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// HTTPS transfers may share an HTTP/2 connection, so the engine admits many of them per connection
/// slot. Once a host has answered in HTTP/1.1, its transfers get one slot each, as plain HTTP's do:
/// the ones beyond the per-host limit wait in the engine, not in curl's pending list.
@Suite("Concurrency: HTTPS to a server that speaks HTTP/1.1 only", .serialized)
struct HTTP1OverTLSTests {
    private static func twoPerHost(_ configuration: inout TransferEngine.Configuration) {
        configuration.maximumConnectionsPerHost = 2
    }

    private static func request(_ url: URL) -> TransferRequest {
        TransferRequest(url: url, options: TransferOptions.trustingTestCA)
    }

    @Test("after an HTTP/1.1 answer, HTTPS transfers beyond the per-host limit wait in the engine",
          arguments: BackendConfiguration.allCases)
    func waitsInTheEngine(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: Self.twoPerHost) { engine in
            let server = try testServer()
            let first = try await engine.fetch(Self.request(server.http1TLSURL(.bytes(1))))
            #expect(first.metrics.httpVersion == .http1_1)

            // Two transfers that get no answer take both slots (transfers start on the engine's
            // context in the order they are started).
            let holders = (0..<2).map { _ in TransferRecorder(engine) }
            let held = holders.map { engine.makeTransfer(Self.request(server.http1TLSURL(.delay(120_000))), delegate: $0) }
            for transfer in held { transfer.start() }

            // Four more wait in the engine, not in curl: without what the engine learnt from the
            // first answer, it would have handed them to curl, as transfers that could share a
            // connection.
            let recorders = (0..<4).map { _ in TransferRecorder(engine) }
            for (index, recorder) in recorders.enumerated() {
                engine.makeTransfer(Self.request(server.http1TLSURL(.bytes(100 + index))), delegate: recorder).start()
            }
            #expect(await waitUntil { await engine.diagnostics().transfersWaitingForConnection == 4 })
            #expect(recorders.allSatisfy { $0.completionCount == 0 })

            // When the slots are given back, the waiting transfers run, with the right bodies.
            for transfer in held { transfer.cancel() }
            for holder in holders {
                #expect(await holder.result()?.failure?.code == .cancelled)
            }
            for (index, recorder) in recorders.enumerated() {
                let response = try #require(await recorder.result()).get()
                #expect(response.body == Data(TestServer.expectedBody(count: 100 + index)))
                #expect(response.metrics.httpVersion == .http1_1)
            }
            let opened = recorders.compactMap { try? $0.events.value.completions.first?.get().metrics.connectionsOpened }
            #expect(opened.reduce(0, +) <= 2, "never more connections than slots")
            #expect(await engine.diagnostics().transfersWaitingForConnection == 0)
        }
    }

    @Test("the engine knows from the first response head, before its body ends",
          arguments: BackendConfiguration.allCases)
    func learnsAtTheHead(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, configure: Self.twoPerHost) { engine in
            let server = try testServer()
            // The first response's head comes at once, the rest of its body in two minutes.
            let slow = TransferRecorder(engine)
            let first = engine.makeTransfer(
                Self.request(server.http1TLSURL(.drip(bytes: 2, chunks: 2, intervalMilliseconds: 120_000))), delegate: slow)
            first.start()
            #expect(await waitUntil { !slow.events.value.heads.isEmpty })

            // It holds one slot, a transfer that gets no answer the other: three more wait.
            let holder = TransferRecorder(engine)
            let held = engine.makeTransfer(Self.request(server.http1TLSURL(.delay(120_000))), delegate: holder)
            held.start()
            let recorders = (0..<3).map { _ in TransferRecorder(engine) }
            for recorder in recorders {
                engine.makeTransfer(Self.request(server.http1TLSURL(.bytes(10))), delegate: recorder).start()
            }
            #expect(await waitUntil { await engine.diagnostics().transfersWaitingForConnection == 3 })
            #expect(slow.completionCount == 0)

            first.cancel()
            held.cancel()
            for recorder in recorders {
                #expect(try #require(await recorder.result()).get().body == Data(TestServer.expectedBody(count: 10)))
            }
            #expect(await slow.result()?.failure?.code == .cancelled)
            #expect(await holder.result()?.failure?.code == .cancelled)
        }
    }

    @Test("what the engine learns of one host leaves an HTTP/2 host's transfers sharing a connection",
          arguments: BackendConfiguration.allCases)
    func http2HostUnaffected(_ backend: BackendConfiguration) async throws {
        try #require(LibCurl.supportsHTTP2)
        try await withEngine(backend, configure: Self.twoPerHost) { engine in
            let server = try testServer()
            #expect(try await engine.fetch(Self.request(server.http1TLSURL(.bytes(1)))).metrics.httpVersion == .http1_1)
            #expect(try await engine.fetch(try .get(.bytes(1), tls: true)).metrics.httpVersion == .http2)

            // Two streams that get no answer, then four more transfers: all share the connection.
            let holders = (0..<2).map { _ in TransferRecorder(engine) }
            let held = try holders.map { engine.makeTransfer(try .get(.delay(120_000), tls: true), delegate: $0) }
            for transfer in held { transfer.start() }
            let recorders = (0..<4).map { _ in TransferRecorder(engine) }
            for (index, recorder) in recorders.enumerated() {
                engine.makeTransfer(try .get(.bytes(100 + index), tls: true), delegate: recorder).start()
            }
            for (index, recorder) in recorders.enumerated() {
                let response = try #require(await recorder.result()).get()
                #expect(response.body == Data(TestServer.expectedBody(count: 100 + index)))
                #expect(response.metrics.httpVersion == .http2)
                #expect(response.metrics.connectionsOpened == 0, "a stream of the open connection")
            }
            #expect(holders.allSatisfy { $0.completionCount == 0 }, "the held streams still run beside them")
            for transfer in held { transfer.cancel() }
            for holder in holders {
                #expect(await holder.result()?.failure?.code == .cancelled)
            }
        }
    }
}
