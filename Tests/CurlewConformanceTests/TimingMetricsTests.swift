import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// What ``TransferMetrics`` reports beyond the basic timings: the pre-transfer time, redirect
/// time, time waited for a connection slot, bytes on the wire, connection reuse and addresses.
@Suite("Timing metrics")
struct TimingMetricsTests {
    @Test("timings are ordered, and bytes on the wire are counted both ways", arguments: BackendConfiguration.allCases)
    func timingsAndBytes(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            var request = TransferRequest(url: server.url(.echo), method: .post, body: .data(Data(repeating: 1, count: 3000)))
            request.options.automaticDecompression = false
            let response = try await engine.fetch(request)
            let metrics = response.metrics
            #expect(metrics.connect <= metrics.preTransfer)
            #expect(metrics.preTransfer > .zero && metrics.preTransfer <= metrics.firstByte)
            #expect(metrics.requestBodyBytes == 3000)
            #expect(metrics.requestHeaderBytes > 40)
            #expect(metrics.responseHeaderBytes > 20)
            #expect(metrics.responseBodyBytes == Int64(response.body?.count ?? -1))
            #expect(!metrics.isConnectionReused)
            #expect(metrics.redirectTime == .zero && metrics.connectionSlotWait == .zero)
            if LibCurl.reportsConnectionIDs {
                #expect(metrics.connectionID != nil)
            } else {
                #expect(metrics.connectionID == nil)
            }

            let second = try await engine.fetch(TransferRequest(url: server.url(.bytes(10))))
            #expect(second.metrics.isConnectionReused)
            #expect(second.metrics.localPort == metrics.localPort, "the same connection")
        }
    }

    @Test("redirect time is the redirects' share of the transfer", arguments: BackendConfiguration.allCases)
    func redirectTime(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let response = try await engine.fetch(TransferRequest(url: server.url(.redirect(count: 2))))
            #expect(response.metrics.redirectCount == 2)
            #expect(response.metrics.redirectTime > .zero)
            let direct = try await engine.fetch(TransferRequest(url: server.url(.redirect(count: 0))))
            #expect(direct.metrics.redirectTime == .zero)
        }
    }

    @Test("time waited in the engine for a connection slot is reported", arguments: BackendConfiguration.allCases)
    func slotWait(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend, configure: { $0.maximumConnectionsPerHost = 1 }) { engine in
            let holder = TransferRecorder(engine)
            let held = engine.makeTransfer(TransferRequest(url: server.url(.delay(120_000))), delegate: holder)
            held.start()
            let waiter = TransferRecorder(engine)
            engine.makeTransfer(TransferRequest(url: server.url(.bytes(1))), delegate: waiter).start()
            #expect(await waitUntil { await engine.diagnostics().transfersWaitingForConnection == 1 })
            // The waiter waits from before it was seen queued until after the slot came free, so
            // the wait reported covers at least what happens in between: a request to another host.
            let queuedSeen = ContinuousClock.now
            _ = try await engine.fetch(TransferRequest(url: server.otherOriginURL(.bytes(1))))
            let released = ContinuousClock.now
            held.cancel()
            #expect(await holder.result()?.failure?.code == .cancelled)
            let metrics = try #require(await waiter.result()).get().metrics
            #expect(metrics.connectionSlotWait >= released - queuedSeen)
            #expect(metrics.connectionSlotWait > .zero)
        }
    }
}
