import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

/// Where the operation path's resident memory goes under a long soak (issue 15, item 6): rounds of
/// small GETs through `RequestOperation` on an `OperationQueue` of width 64 on the dispatch backend,
/// printing after each round the resident size, the resident size after `malloc_trim(0)` has handed
/// glibc's free pages back, the bytes `malloc` has handed out (`mallinfo2`) and the thread count.
/// It fails when the trimmed resident size keeps climbing after the first round (by 8 MiB or more).
///
/// A measurement, not part of the default run (it keeps both cores busy for a minute or more):
/// `CURLEW_SOAK_TESTS=1 swift test --filter SoakMemoryTests`. `CURLEW_SOAK_ROUNDS` and
/// `CURLEW_SOAK_REQUESTS` change its size (default 6 rounds of 25,000). The rounds run in a child
/// process, where no other test moves the figures; with `CURLEW_SOAK_IN_PROCESS=1` they run in the
/// test process itself, which then exits straight after the last round, so that a heap profiler's
/// "not freed at exit" is what was live at the end of that round:
///
/// ```sh
/// CURLEW_SOAK_IN_PROCESS=1 CURLEW_SOAK_ROUNDS=2 heaptrack -o two .build/debug/CurlewPackageTests.xctest \
///     --testing-library swift-testing --filter SoakMemoryTests      # likewise six, then:
/// heaptrack_print -f six.zst -d two.zst --print-leaks 1
/// ```
///
/// Figures and what they show: `Docs/Resilience.md`.
@Suite("RequestOperation: memory under a soak",
       .enabled(if: ProcessInfo.processInfo.environment["CURLEW_SOAK_TESTS"] == "1",
                "a minute or more of full load; run alone with CURLEW_SOAK_TESTS=1"))
struct SoakMemoryTests {
    @Test("live memory stays flat over rounds of 25,000 operations at width 64")
    func soak() async {
        if ProcessInfo.processInfo.environment["CURLEW_SOAK_IN_PROCESS"] == "1" {
            await Self.run()
        }
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await Self.run()
        }
        printStandardError(of: result)
    }

    /// Runs the rounds, reports each, and exits the process: 0 when the trimmed resident size stayed
    /// within bounds, 1 otherwise. Nothing is torn down first (see the type's discussion).
    static func run() async -> Never {
        let environment = ProcessInfo.processInfo.environment
        let rounds = environment["CURLEW_SOAK_ROUNDS"].flatMap(Int.init) ?? 6
        let perRound = environment["CURLEW_SOAK_REQUESTS"].flatMap(Int.init) ?? 25_000
        guard let server = try? TestServer.start() else { failChildProcess("no test server") }
        let engine = TransferEngine(scheduler: DispatchScheduler(sockets: .sourcePerSocket))
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 64
        let url = server.url(.bytes(13))
        var trimmed: [Int64] = []
        for round in 1...rounds {
            let finished = Locked(0)
            let failures = Locked(0)
            for _ in 0..<perRound {
                let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
                operation.setCompletionHandlers(success: { _, _ in finished.withLock { $0 += 1 } },
                                                failure: { _, _ in
                                                    failures.withLock { $0 += 1 }
                                                    finished.withLock { $0 += 1 }
                                                })
                queue.addOperation(operation)
            }
            guard await waitUntil(timeout: .seconds(600), { finished.value == perRound }) else { failChildProcess("round \(round) stalled") }
            guard let before = ProcessInspector.residentMemory() else { failChildProcess("no /proc/self/status") }
            ProcessInspector.releaseFreeHeapPages()
            guard let after = ProcessInspector.residentMemory() else { failChildProcess("no /proc/self/status") }
            trimmed.append(after.current)
            let line = "soak | round \(round) | \(round * perRound) operations | RSS \(before.current >> 10) KiB | "
                + "after malloc_trim \(after.current >> 10) KiB | malloc in use \(ProcessInspector.heapInUse() >> 10) KiB | "
                + "threads \(ProcessInspector.threadCount()) | failures \(failures.value)\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
        // After the warm-up round, the trimmed size may not keep climbing.
        guard let second = trimmed.dropFirst().first, let last = trimmed.last, last - second < 8 << 20 else {
            failChildProcess("the trimmed resident size grew: \(trimmed.map { $0 >> 10 }) KiB")
        }
        exit(0)
    }

}
