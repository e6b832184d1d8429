import BenchKit
import Foundation

/// Runs `wrk -t1 -c C -d Ns --latency URL` for one planned run and makes a ``RunRecord`` of it.
///
/// wrk reports requests, bytes and latency (p50/p75/p90/p99, max); the runner adds what the kernel
/// accounted to the wrk process (CPU, peak RSS, context switches, over its whole life) and its thread
/// count, sampled. It cannot report p99.9 or lateness; those are marked unavailable.
struct WrkExecutor {
    /// wrk's path, if installed.
    var executable: String?
    /// The scaling knobs.
    var size: RunSize
    /// A folder for the POST script.
    var scratchFolder: String

    /// Runs `run` against `assignment`.
    func execute(_ run: PlannedRun, assignment: ServerSet.Assignment) -> RunRecord {
        let seconds = max(1, Int(self.size.durationSeconds.rounded(.up)))
        var arguments = ["-t1", "-c", String(run.concurrency), "-d", "\(seconds)s", "--latency"]
        if let bodyBytes = run.scenario.bodyBytes, let script = self.postScript(bodyBytes: bodyBytes) {
            arguments += ["-s", script]
        }
        arguments.append(assignment.url)
        var record = RunRecord(
            scenario: run.scenario.id, concurrency: run.concurrency, client: run.client.name,
            repeatNumber: run.repeatNumber, status: .failed, reason: nil, url: assignment.url,
            server: assignment.endpoint.label, result: nil, unavailable: ["latency.p999"], processUsage: .zero,
            termination: "not started", wallSeconds: 0, commandLine: ["wrk"] + arguments
        )
        guard let executable else {
            record.status = .unsupported
            record.reason = "wrk is not installed"
            return record
        }
        record.commandLine[0] = executable
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(executable: executable, arguments: arguments)
        } catch {
            record.reason = "\(error)"
            return record
        }
        let limit = self.size.timeoutSeconds ?? Double(seconds) * 3 + 30
        let outcome = child.wait(timeoutSeconds: limit, sampleThreads: true)
        record.processUsage = outcome.usage
        record.termination = outcome.timedOut ? "killed after \(Int(limit)) s" : outcome.termination.description
        record.wallSeconds = outcome.wallSeconds
        if outcome.timedOut {
            record.reason = "hung: killed after \(Int(limit)) s"
            return record
        }
        guard outcome.termination == .exited(0) else {
            record.reason = "\(outcome.termination): \(outcome.errorTail(lines: 3))"
            return record
        }
        switch WrkOutputParser.parse(outcome.outputText) {
        case .failure(let failure):
            record.reason = failure.reason
        case .success(let report):
            record.result = self.result(from: report, run: run, outcome: outcome)
            if report.errors > 0 {
                record.reason = "\(report.errors) socket errors or non-2xx responses"
            } else if report.requests == 0 {
                record.reason = "no request completed"
            } else {
                record.status = .ok
            }
        }
        return record
    }

    /// The report in the clients' shape. Body bytes are estimated from wrk's bytes read (headers included)
    /// only for the MB/s scenario, where headers are negligible; elsewhere requests × body size.
    private func result(from report: WrkReport, run: PlannedRun, outcome: ProcessOutcome) -> ClientResult {
        let body = run.scenario.resource.bodyBytes.map { Int64($0) * Int64(report.requests) } ?? 0
        let bytes = run.scenario.headline == .megabytesPerSecond ? Int64(report.bytesRead) : body
        return ClientResult(
            client: run.client.name, scenario: run.scenario.clientScenario, concurrency: run.concurrency,
            requests: report.requests, errors: report.errors, elapsedSeconds: report.seconds,
            bytesReceived: bytes,
            latency: Percentiles(p50: report.p50, p90: report.p90, p99: report.p99, p999: 0, max: report.max),
            cpuUserMicros: outcome.usage.userMicros, cpuSystemMicros: outcome.usage.systemMicros,
            maxRSSKiB: outcome.usage.maxRSSKiB, threadsPeak: outcome.threadsPeak,
            voluntaryContextSwitches: outcome.usage.voluntaryContextSwitches,
            involuntaryContextSwitches: outcome.usage.involuntaryContextSwitches,
            note: "wrk: CPU and context switches are the whole process's (wait4), RSS and threads sampled from /proc; no p99.9"
        )
    }

    /// A Lua script that makes wrk POST `bodyBytes` bytes; nil when it cannot be written.
    private func postScript(bodyBytes: Int) -> String? {
        let path = self.scratchFolder + "/post-\(bodyBytes).lua"
        let script = """
            wrk.method = "POST"
            wrk.body = string.rep("a", \(bodyBytes))
            wrk.headers["Content-Type"] = "application/octet-stream"

            """
        do {
            try script.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        } catch {
            return nil
        }
    }
}
