import Foundation
import BenchKit

/// Progress on stderr while the matrix runs: a bar that rewrites its line when stderr is a terminal,
/// one plain line per finished run otherwise (CI logs). Failures always get a line of their own.
final class ProgressReporter {
    private let runs: [PlannedRun]
    private let size: RunSize
    private let repeats: Int
    private let isTerminal: Bool
    private let started = ContinuousClock.now
    private var finished = 0
    /// Seconds spent so far against seconds expected for the runs done: scales the time-left estimate.
    private var expectedDone = 0.0

    /// A reporter for `runs`.
    init(runs: [PlannedRun], size: RunSize, repeats: Int, isTerminal: Bool = Console.standardErrorIsTerminal) {
        self.runs = runs
        self.size = size
        self.repeats = repeats
        self.isTerminal = isTerminal
    }

    /// A rough duration of one run, seconds (the measured phase plus process start and warm-up).
    static func expectedSeconds(of run: PlannedRun, size: RunSize) -> Double {
        switch run.scenario.headline {
        case .idleCost: return size.idleSeconds + 0.7
        case .threads:
            let waves = Double((size.threadsRequests + run.concurrency - 1) / max(1, run.concurrency))
            return waves * Double(size.threadsDelayMilliseconds) / 1000 + 1.5
        default:
            // Counted runs at about 1 GB/s.
            return (size.countedBytes(for: run.scenario).map { $0 / 1e9 } ?? size.durationSeconds) + 0.7
        }
    }

    /// An estimate of the whole matrix, seconds.
    static func expectedSeconds(of runs: [PlannedRun], size: RunSize) -> Double {
        runs.reduce(0) { $0 + self.expectedSeconds(of: $1, size: size) }
    }

    /// Shows that `run` is starting (on a terminal only).
    func willStart(_ run: PlannedRun) {
        guard self.isTerminal else { return }
        Console.writeError("\r\u{1B}[2K" + self.bar(current: run))
    }

    /// Reports how `run` went.
    func didFinish(_ run: PlannedRun, record: RunRecord) {
        self.finished += 1
        self.expectedDone += Self.expectedSeconds(of: run, size: self.size)
        let line = self.describe(run, record: record)
        if self.isTerminal {
            Console.writeError("\r\u{1B}[2K")
            if record.status == .failed { Console.log(line) }
        } else {
            Console.log(line)
        }
    }

    /// Clears the bar.
    func finish() {
        if self.isTerminal { Console.writeError("\r\u{1B}[2K") }
        Console.log("curlew-bench: \(self.finished) runs in \(Self.clock((ContinuousClock.now - self.started).seconds))")
    }

    private func bar(current run: PlannedRun) -> String {
        let width = 24
        let filled = self.runs.isEmpty ? width : width * self.finished / self.runs.count
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            + "\(self.finished)/\(self.runs.count) · pass \(run.repeatNumber)/\(self.repeats) · "
            + "\(run.scenario.id) C=\(run.concurrency) · \(run.client.name) · \(self.timeLeft()) left"
    }

    /// `[ 37/150] pass 2/3 get-small C=16 curl-c: 52.1k req/s (2.3 s)`.
    private func describe(_ run: PlannedRun, record: RunRecord) -> String {
        let counter = "[\(String(repeating: " ", count: max(0, String(self.runs.count).count - String(self.finished).count)))\(self.finished)/\(self.runs.count)]"
        let head = "\(counter) pass \(run.repeatNumber)/\(self.repeats) \(run.scenario.id) C=\(run.concurrency) \(run.client.name)"
        let wall = " (\(Format.significant(record.wallSeconds)) s)"
        switch record.status {
        case .failed: return head + ": FAILED: " + (record.reason ?? "?").prefix(400) + wall
        case .unsupported: return head + ": n/a: " + (record.reason ?? "") + wall
        case .ok: return head + ": " + self.headline(run, record.result) + wall
        }
    }

    private func headline(_ run: PlannedRun, _ result: ClientResult?) -> String {
        guard let result else { return "ok" }
        switch run.scenario.headline {
        case .requestsPerSecond:
            return "\(Format.count(result.requestsPerSecond)) req/s, p99 \(Format.micros(result.latency.p99))"
        case .megabytesPerSecond:
            let megabytes = result.elapsedSeconds > 0 ? Double(result.bytesReceived) / result.elapsedSeconds / 1e6 : 0
            let start = result.startupRSSKiB.map { ", \(Format.significant(Double($0) / 1024)) MiB at start" } ?? ""
            return "\(Format.count(megabytes)) MB/s, peak RSS \(Format.significant(Double(result.maxRSSKiB) / 1024)) MiB\(start)"
        case .mainThreadLateness:
            let lateness = result.mainThreadLateness.map { Format.micros($0.p99) } ?? Format.none
            return "lateness p99 \(lateness), \(Format.count(result.requestsPerSecond)) req/s"
        case .idleCost:
            return "CPU \(Format.micros(Double(result.cpuUserMicros + result.cpuSystemMicros))), "
                + "\(result.voluntaryContextSwitches) wake-ups"
        case .threads:
            return "\(result.threadsPeak) threads, \(Format.significant(Double(result.maxRSSKiB) / 1024)) MiB"
        }
    }

    private func timeLeft() -> String {
        let remaining = self.runs.dropFirst(self.finished).reduce(0) { $0 + Self.expectedSeconds(of: $1, size: self.size) }
        let elapsed = (ContinuousClock.now - self.started).seconds
        let pace = self.expectedDone > 0 ? max(0.5, elapsed / self.expectedDone) : 1
        return Self.clock(remaining * pace)
    }

    /// `1m05s`, `42s`.
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 60 ? "\(total / 60)m\(String(format: "%02d", total % 60))s" : "\(total)s"
    }
}
