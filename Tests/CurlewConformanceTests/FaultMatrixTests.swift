import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The fault matrix: every fault a hostile or broken server (or a bad client setting) can throw at a
/// transfer ends in its one typed error, with exactly one completion, on every backend; the engine
/// is fine afterwards (another transfer completes before the completions are counted); and no row
/// costs more than a bounded amount of memory (checked in a child process per backend, where nothing
/// else moves the peak).
@Suite("Fault matrix")
struct FaultMatrixTests {
    @Test("each fault ends in its typed error, exactly once", arguments: BackendConfiguration.allCases, FaultRow.all)
    func row(_ backend: BackendConfiguration, _ row: FaultRow) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let recorder = TransferRecorder(engine)
            engine.makeTransfer(row.request(on: server), delegate: recorder).start()
            let result = try #require(await recorder.result(), "\(row) never completed")
            // Settle: the engine still works, and a late second completion would have arrived by now.
            _ = try await engine.fetch(try .get(.bytes(10)))
            #expect(recorder.completionCount == 1, "\(row): \(recorder.completionCount) completions")
            #expect(recorder.events.value.callsOffContext == 0)
            switch result {
            case .success(let response):
                Issue.record("\(row): expected \(row.expected), got HTTP \(response.head.status)")
            case .failure(let error):
                #expect(row.accepted.contains(error.code), "\(row): \(error)")
                let retried = RetryPolicy.default.decide(after: .failure(error), method: .get, attempt: 1) != .doNotRetry
                #expect(retried == row.isRetryable(after: error.code), "\(row): retried \(retried) after \(error)")
                #expect(error.failingURL != nil, "\(row): no failing URL in \(error)")
            }
        }
    }

    /// The most the peak resident memory may grow while one row runs.
    static let allowedGrowth: Int64 = 32 << 20

    @Test("no fault costs more than 32 MiB of peak memory", arguments: BackendConfiguration.allCases)
    func boundedMemory(_ backend: BackendConfiguration) async {
        let name: String = backend.rawValue
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [name = name as String] in
            guard let backend = BackendConfiguration(rawValue: name) else { failChildProcess("unknown backend \(name)") }
            await Self.measureEveryRow(backend)
        }
        printStandardError(of: result)
    }

    /// In the child: every row in turn, its peak memory growth measured; exits with a failure when a
    /// row ends otherwise than expected, completes other than once, or grows the peak too much.
    static func measureEveryRow(_ backend: BackendConfiguration) async {
        guard let server = try? TestServer.start() else { failChildProcess("no test server") }
        let engine = TransferEngine(scheduler: backend.makeScheduler())
        var failures: [String] = []
        // Warm up: the engine, TLS, the server's bomb bytes.
        for row in [FaultRow(fault: .emptyReply), FaultRow(fault: .tlsSelfSigned), FaultRow(fault: .gzipBomb)] {
            _ = await Self.run(row, engine: engine, server: server)
        }
        for row in FaultRow.all {
            guard let before = ProcessInspector.residentMemory(), ProcessInspector.resetPeakResidentMemory() else {
                failChildProcess("cannot read or reset the resident memory")
            }
            let start = ContinuousClock.now
            let (code, completions) = await Self.run(row, engine: engine, server: server)
            let elapsed = ContinuousClock.now - start
            guard let after = ProcessInspector.residentMemory() else { failChildProcess("cannot read the resident memory") }
            let growth = after.peak - before.current
            let line = "fault-matrix | \(backend.rawValue) | \(row) | \(code.map { "\($0)" } ?? "success") | "
                + "\(completions) | peak \(after.peak >> 20) MiB, +\(max(growth, 0) >> 10) KiB | \(elapsed)\n"
            FileHandle.standardError.write(Data(line.utf8))
            if !(code.map { row.accepted.contains($0) } ?? false) { failures.append("\(row): \(code.map { "\($0)" } ?? "success")") }
            if completions != 1 { failures.append("\(row): \(completions) completions") }
            if growth > Self.allowedGrowth { failures.append("\(row): peak grew by \(growth >> 20) MiB") }
        }
        await engine.shutdown()
        guard failures.isEmpty else { failChildProcess(failures.joined(separator: "; ")) }
    }

    /// Runs one row and a settling transfer; returns the row's code (`nil`: success) and how many
    /// completions its transfer had.
    private static func run(_ row: FaultRow, engine: TransferEngine, server: TestServer) async -> (TransferError.Code?, Int) {
        let recorder = TransferRecorder(engine)
        engine.makeTransfer(row.request(on: server), delegate: recorder).start()
        guard let result = await recorder.result() else { failChildProcess("\(row) never completed") }
        let settle = TransferRecorder(engine)
        engine.makeTransfer(TransferRequest(url: server.url(.bytes(10))), delegate: settle).start()
        guard case .success = await settle.result() else { failChildProcess("the engine did not settle after \(row)") }
        switch result {
        case .success: return (nil, recorder.completionCount)
        case .failure(let error): return (error.code, recorder.completionCount)
        }
    }

}
