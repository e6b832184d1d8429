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
