import BenchKit
import Foundation

/// Runs one client process for one planned run and turns what happened into a ``RunRecord``.
struct ClientExecutor {
    /// The scaling knobs.
    var size: RunSize
    /// Where the stderr of failed runs is kept, if anywhere.
    var logFolder: String?

    /// Runs `run` against `assignment` and waits for it (killing it past its time limit).
    func execute(_ run: PlannedRun, assignment: ServerSet.Assignment) -> RunRecord {
        let arguments = ClientInvocation.arguments(
            for: run, url: assignment.url, caFile: assignment.endpoint.caFile, size: self.size
        )
        var record = RunRecord(
            scenario: run.scenario.id, concurrency: run.concurrency, client: run.client.name,
            repeatNumber: run.repeatNumber, status: .failed, reason: nil, url: assignment.url,
            server: assignment.endpoint.label, result: nil, unavailable: [], processUsage: .zero,
            termination: "not started", wallSeconds: 0, commandLine: [run.client.product ?? run.client.name] + arguments
        )
        guard let product = run.client.product, let executable = ExecutableLookup.sibling(product) else {
            record.reason = "\(run.client.product ?? run.client.name) is not built in \(ExecutableLookup.buildFolder.path)"
            if run.client.isOptional {
                record.status = .unsupported
                record.reason = (record.reason ?? "") + " (optional: \(run.client.summary))"
            }
            return record
        }
        record.commandLine[0] = executable
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(
                executable: ForkingLauncher.shell,
                arguments: ForkingLauncher.arguments(executable: executable, arguments: arguments),
                newProcessGroup: true
            )
        } catch {
            record.reason = "\(error)"
            return record
        }
        let limit = self.size.timeLimit(for: run.scenario, concurrency: run.concurrency)
        let outcome = child.wait(timeoutSeconds: limit)
        record.processUsage = outcome.usage
        record.termination = outcome.timedOut ? "killed after \(Int(limit)) s" : ForkingLauncher.describe(outcome.termination)
        record.wallSeconds = outcome.wallSeconds

        let parsed = ClientOutputParser.parse(
            outcome.outputText, client: run.client.name, scenario: run.scenario.clientScenario,
            concurrency: run.concurrency
        )
        if case .success(let result) = parsed { record.result = result }
        (record.status, record.reason) = self.judge(run, outcome: outcome, parsed: parsed, limit: limit)
        if record.status == .failed { self.keepLog(of: run, outcome: outcome, commandLine: record.commandLine) }
        return record
    }

    /// Whether the run counts, and why not.
    private func judge(
        _ run: PlannedRun, outcome: ProcessOutcome, parsed: Result<ClientResult, ClientOutputParser.ParseFailure>,
        limit: Double
    ) -> (RunRecord.Status, String?) {
        let stderrTail = outcome.errorTail(lines: 3)
        let suffix = stderrTail.isEmpty ? "" : " (stderr: \(stderrTail.prefix(300)))"
        if outcome.timedOut {
            return (.failed, "hung: killed after \(Int(limit)) s" + suffix)
        }
        if outcome.termination != .exited(0) {
            return (.failed, ForkingLauncher.describe(outcome.termination) + suffix)
        }
        let result: ClientResult
        switch parsed {
        case .failure(let failure): return (.failed, failure.reason + suffix)
        case .success(let value): result = value
        }
        if run.scenario.isLoad && result.requests == 0 {
            if let note = result.note, !note.isEmpty { return (.unsupported, note) }
            return (.failed, "no transfer completed")
        }
        if result.errors > 0 {
            return (.failed, "\(result.errors) of \(result.requests) transfers failed" + suffix)
        }
        if let bodyBytes = run.scenario.resource.bodyBytes, let problem = BodyBytesCheck.problem(in: result, bodyBytes: bodyBytes) {
            return (.failed, problem)
        }
        return (.ok, nil)
    }

    /// Writes the command line and stderr of a failed run to the log folder.
    private func keepLog(of run: PlannedRun, outcome: ProcessOutcome, commandLine: [String]) {
        guard let logFolder else { return }
        let name = "\(run.scenario.id)-c\(run.concurrency)-\(run.client.name)-r\(run.repeatNumber).log"
        let text = "$ " + commandLine.joined(separator: " ") + "\n# \(outcome.termination)\n# stdout:\n"
            + outcome.outputText + "\n# stderr:\n" + String(decoding: outcome.standardError, as: UTF8.self)
        try? FileManager.default.createDirectory(atPath: logFolder, withIntermediateDirectories: true)
        try? text.write(toFile: logFolder + "/" + name, atomically: true, encoding: .utf8)
    }
}
