import Foundation

/// Runs one client at two request counts under callgrind or strace and differences the totals.
final class RequestCounter {
    private let tools: CountingTools
    private let url: String
    private let concurrency: Int
    private let warmup: Int
    private let scratch: String
    private let logFolder: String
    /// The annotated client's top self costs per request (the two runs' annotations differenced), once measured.
    private(set) var profile: [CallgrindOutput.Function]?

    /// How long one run may take under valgrind (it runs a client 30–100 times slower).
    private static let valgrindTimeLimit = 3_600.0
    private static let straceTimeLimit = 600.0

    init(tools: CountingTools, url: String, concurrency: Int, warmup: Int, scratch: String, logFolder: String) {
        self.tools = tools
        self.url = url
        self.concurrency = concurrency
        self.warmup = warmup
        self.scratch = scratch
        self.logFolder = logFolder
    }

    /// Instructions per request of `client`, and its top self costs when `annotate` is set.
    func instructionsPerRequest(_ client: BenchClient, small: Int, large: Int, annotate: Bool) -> Result<CountsRow.Instructions, CountFailure> {
        guard let valgrind = self.tools.valgrind else { return .failure(CountFailure(reason: "valgrind is not installed")) }
        guard client.name != "go-net-http" else {
            return .failure(CountFailure(reason: "Go programs do not run under valgrind"))
        }
        let executable: String
        switch self.strippedCopy(of: client) {
        case .success(let path): executable = path
        case .failure(let failure): return .failure(failure)
        }
        var totals: [Int64] = []
        var annotations: [[String: Int64]] = []
        for count in [small, large] {
            let out = "\(self.scratch)/\(client.name)-\(count).callgrind"
            let arguments = ["--tool=callgrind", "--callgrind-out-file=\(out)", executable] + self.clientArguments(client, requests: count)
            if let failure = self.runClient(valgrind, arguments, client: client, requests: count, timeLimit: Self.valgrindTimeLimit) {
                return .failure(failure)
            }
            guard let text = try? String(contentsOfFile: out, encoding: .utf8), let total = CallgrindOutput.totalInstructions(in: text) else {
                return .failure(CountFailure(reason: "callgrind wrote no total to \(out)"))
            }
            totals.append(total)
            if annotate, let annotator = self.tools.callgrindAnnotate,
               let child = try? ChildProcess.spawn(executable: annotator, arguments: ["--inclusive=no", "--threshold=100", out]) {
                let outcome = child.wait(timeoutSeconds: 300)
                annotations.append(Dictionary(CallgrindOutput.functions(inAnnotation: outcome.outputText).map { ($0.name, $0.instructions) },
                                              uniquingKeysWith: +))
            }
        }
        if annotations.count == 2 {
            let requests = Int64(large - small)
            self.profile = annotations[1].map { name, instructions in
                CallgrindOutput.Function(instructions: (instructions - (annotations[0][name] ?? 0)) / requests, name: name)
            }.sorted { $0.instructions > $1.instructions }.prefix(15).map { $0 }
        }
        let perRequest = Double(totals[1] - totals[0]) / Double(large - small)
        return .success(CountsRow.Instructions(smallTotal: totals[0], largeTotal: totals[1], perRequest: perRequest))
    }

    /// System calls per request of `client`, by name.
    func syscallsPerRequest(_ client: BenchClient, small: Int, large: Int) -> Result<[String: Double], CountFailure> {
        guard let strace = self.tools.strace else { return .failure(CountFailure(reason: "strace is not installed")) }
        guard let product = client.product, let executable = ExecutableLookup.sibling(product) else {
            return .failure(CountFailure(reason: "\(client.product ?? client.name) is not built"))
        }
        var summaries: [StraceSummary] = []
        for count in [small, large] {
            let out = "\(self.scratch)/\(client.name)-\(count).strace"
            let arguments = ["-f", "-c", "-o", out, executable] + self.clientArguments(client, requests: count)
            if let failure = self.runClient(strace, arguments, client: client, requests: count, timeLimit: Self.straceTimeLimit) {
                return .failure(failure)
            }
            guard let text = try? String(contentsOfFile: out, encoding: .utf8), let summary = StraceSummary(text) else {
                return .failure(CountFailure(reason: "strace wrote no summary to \(out)"))
            }
            summaries.append(summary)
        }
        var perRequest: [String: Double] = [:]
        for name in Set(summaries[0].calls.keys).union(summaries[1].calls.keys) {
            let difference = Double((summaries[1].calls[name] ?? 0) - (summaries[0].calls[name] ?? 0)) / Double(large - small)
            if abs(difference) >= 0.005 { perRequest[name] = difference }
        }
        return .success(perRequest)
    }

    // MARK: Private

    private func clientArguments(_ client: BenchClient, requests: Int) -> [String] {
        ["--client", client.name, "--url", self.url, "--scenario", "get", "--concurrency", String(self.concurrency),
         "--requests", String(requests), "--warmup-requests", String(self.warmup)]
    }

    /// Runs a client under a tool; `nil` when it ran and reported `requests` completions without errors.
    private func runClient(_ tool: String, _ arguments: [String], client: BenchClient, requests: Int, timeLimit: Double) -> CountFailure? {
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(executable: tool, arguments: arguments)
        } catch {
            return CountFailure(reason: "\(error)")
        }
        let outcome = child.wait(timeoutSeconds: timeLimit)
        let log = "\(self.logFolder)/counts-\(client.name)-\(requests)-\(URL(fileURLWithPath: tool).lastPathComponent).stderr"
        try? Data(outcome.standardError).write(to: URL(fileURLWithPath: log))
        guard outcome.succeeded else {
            return CountFailure(reason: "\(client.name) under \(tool) ended with \(outcome.termination)\(outcome.timedOut ? " (timed out)" : ""): \(outcome.errorTail(lines: 2))")
        }
        switch ClientOutputParser.parse(outcome.outputText, client: client.name, scenario: "get", concurrency: self.concurrency) {
        case .failure(let failure):
            return CountFailure(reason: failure.reason)
        case .success(let result) where result.errors > 0 || result.requests != requests:
            return CountFailure(reason: "\(result.requests) requests, \(result.errors) errors (expected \(requests), 0)")
        case .success:
            return nil
        }
    }

    /// A copy of the client without debug information (valgrind 3.19 cannot read some of Swift's DWARF);
    /// the symbol table stays, so profiles name functions.
    private func strippedCopy(of client: BenchClient) -> Result<String, CountFailure> {
        guard let product = client.product, let executable = ExecutableLookup.sibling(product) else {
            return .failure(CountFailure(reason: "\(client.product ?? client.name) is not built"))
        }
        guard let strip = self.tools.strip else { return .success(executable) }
        let copy = "\(self.scratch)/\(product)"
        if FileManager.default.isExecutableFile(atPath: copy) { return .success(copy) }
        guard let child = try? ChildProcess.spawn(executable: strip, arguments: ["--strip-debug", "-o", copy, executable]),
              child.wait(timeoutSeconds: 120).succeeded else {
            return .success(executable)
        }
        return .success(copy)
    }
}

/// Why a count is missing.
struct CountFailure: Error, Sendable, Hashable {
    var reason: String
}
