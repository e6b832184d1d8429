import Foundation
import Testing

/// Every example, what it must show, and how many checks it makes.
enum Example: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case keepAlive = "keep-alive"
    case syncDeadlock = "sync-deadlock"
    case mainLoopLateness = "main-loop-lateness"
    case threadPerOperation = "thread-per-operation"
    case traceBackends = "trace-backends"
    case pauseResume = "pause-resume"
    case batchOrder = "batch-order"

    /// The claims of `Docs/Lessons.md` the example checks.
    var claims: Set<Int> {
        switch self {
        case .keepAlive: [2, 3, 5]
        case .syncDeadlock: [1, 8, 9]
        case .mainLoopLateness: [6]
        case .threadPerOperation: [6, 7]
        case .traceBackends: [4, 10, 13, 14, 15]
        case .pauseResume: [11, 12]
        case .batchOrder: [16, 17, 18, 19]
        }
    }

    /// How many checks the example prints: a check that disappears is noticed too.
    var checkCount: Int {
        switch self {
        case .keepAlive: 6            // four keep-alive checks, the lazy thread, the modes
        case .syncDeadlock: 8         // per backend: context, start, deadlock, no queue
        case .mainLoopLateness: 1
        case .threadPerOperation: 3   // the pool, the dispatch backend, the thread per operation
        case .traceBackends: 17       // five per backend, plus the idle network threads
        case .pauseResume: 6          // per backend: pause/resume, cancel
        case .batchOrder: 5           // two for claim 16, one each for 17, 18, 19
        }
    }

    /// Lines the example must print besides its checks.
    var expectedLines: [String] {
        switch self {
        case .keepAlive: ["Linux: there is no NSMachPort"]
        case .syncDeadlock: ["timed out = true"]
        case .mainLoopLateness: ["completions on the main thread, 0 elsewhere", "the 1 ms tick fired"]
        case .threadPerOperation: ["still", "after every request finished"]
        case .traceBackends: ["transfer: completed", "Trace.epoll  [context]", "Trace.cfsocket  [context]", "completionBlock"]
        case .pauseResume: ["Range: bytes=", "identical to the resource: true"]
        case .batchOrder: ["progress 3/3", "batch completion, 3 operations", "Linux: swift-corelibs-foundation"]
        }
    }

    var testDescription: String { self.rawValue }
}

/// What an example printed, and how it ended.
struct ExampleRun: Sendable {
    var status: Int32
    var output: String
    var timedOut: Bool

    /// The checks it printed, as (claim, held).
    var checks: [(claim: Int, held: Bool)] {
        self.output.split(separator: "\n").compactMap { line -> (Int, Bool)? in
            guard line.hasPrefix("✔ [") || line.hasPrefix("✘ ["),
                  let close = line.firstIndex(of: "]"),
                  let claim = Int(line[line.index(line.startIndex, offsetBy: 3)..<close])
            else { return nil }
            return (claim, line.hasPrefix("✔"))
        }
    }
}

/// Runs the example's executable, built beside this test bundle, in a process of its own; kills it
/// after `timeout`. Suspends while it runs (nothing blocks a cooperative thread).
func run(_ example: Example, timeout: Duration = .seconds(120)) async throws -> ExampleRun {
    let executable = Bundle.main.bundleURL.appendingPathComponent(example.rawValue)
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
        Issue.record("no executable at \(executable.path): build the Examples package first")
        return ExampleRun(status: -1, output: "", timedOut: false)
    }
    let outputURL = FileManager.default.temporaryDirectory
        .appendingPathComponent("curlew-example-\(example.rawValue)-\(UUID().uuidString).txt")
    _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: outputURL) }
    let output = try FileHandle(forWritingTo: outputURL)
    defer { try? output.close() }

    let process = Process()
    process.executableURL = executable
    process.standardOutput = output
    process.standardError = output
    let (ended, endedContinuation) = AsyncStream<Void>.makeStream()
    process.terminationHandler = { _ in endedContinuation.finish() }
    try process.run()
    let timedOut = Flag()
    let watchdog = Task {
        try await Task.sleep(for: timeout)
        timedOut.set()
        kill(process.processIdentifier, SIGKILL)
    }
    for await _ in ended {}
    watchdog.cancel()
    let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
    return ExampleRun(status: process.terminationStatus, output: text, timedOut: timedOut.isSet)
}

/// A flag set once, from any thread.
///
/// Safety: `@unchecked Sendable` because `value` is read and written only while `lock` is held.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() { self.lock.withLock { self.value = true } }
    var isSet: Bool { self.lock.withLock { self.value } }
}

/// Each example runs alone (one at a time: their figures are measurements, and two of them load
/// the machine on purpose) and must exit with status 0 after printing every check it makes, each
/// held, for the claims it is there to show.
@Suite("Examples", .serialized)
struct ExampleTests {
    @Test("the example runs offline, shows its claims and every check holds", arguments: Example.allCases)
    func example(_ example: Example) async throws {
        let result = try await run(example)
        #expect(!result.timedOut, "stopped after 120 s; it printed:\n\(result.output)")
        #expect(result.status == 0, "exit status \(result.status); it printed:\n\(result.output)")
        let checks = result.checks
        #expect(checks.count == example.checkCount, "\(checks.count) checks printed; it printed:\n\(result.output)")
        let failed = checks.filter { !$0.held }.map(\.claim)
        #expect(failed.isEmpty, "checks of claims \(failed) failed; it printed:\n\(result.output)")
        #expect(Set(checks.map(\.claim)) == example.claims, "claims checked: \(Set(checks.map(\.claim)).sorted())")
        for line in example.expectedLines {
            #expect(result.output.contains(line), "missing \"\(line)\" in:\n\(result.output)")
        }
    }

    @Test("together, the examples show all 19 claims of the articles")
    func everyClaim() {
        #expect(Example.allCases.reduce(into: Set<Int>()) { $0.formUnion($1.claims) } == Set(1...19))
    }
}
