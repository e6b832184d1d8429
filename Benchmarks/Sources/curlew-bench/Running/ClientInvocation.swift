/// The command line of a client for one run (the contract in `BenchKit/ClientResult.swift`):
///
/// ```
/// <binary> --client NAME --url URL --scenario get|stream|post|h2|idle|lateness|batch --concurrency C
///          [--connections K] [--requests N] [--duration-seconds S] [--warmup-requests W] [--body-bytes B] [--ca-file PATH]
/// ```
enum ClientInvocation {
    /// The arguments (without the program) for `run` against `url`.
    static func arguments(for run: PlannedRun, url: String, caFile: String?, size: RunSize) -> [String] {
        let scenario = run.scenario
        var arguments = [
            "--client", run.client.name, "--url", url, "--scenario", scenario.clientScenario,
            "--concurrency", String(run.concurrency),
        ]
        if let connections = scenario.connections { arguments += ["--connections", String(connections)] }
        switch scenario.headline {
        case .idleCost:
            arguments += ["--duration-seconds", self.format(size.idleSeconds)]
        case .threads:
            // A fixed number of slow transfers: every one of them is in flight for the whole delay.
            arguments += ["--requests", String(size.threadsRequests), "--warmup-requests", "0"]
        case .requestsPerSecond, .megabytesPerSecond, .mainThreadLateness:
            if let transfers = size.countedTransfers(for: scenario) {
                arguments += ["--requests", String(transfers)]
            } else {
                arguments += ["--duration-seconds", self.format(size.durationSeconds)]
                if let requests = size.requests { arguments += ["--requests", String(requests)] }
            }
            if let warmup = size.warmupRequests(for: scenario) { arguments += ["--warmup-requests", String(warmup)] }
        }
        if let bodyBytes = scenario.bodyBytes { arguments += ["--body-bytes", String(bodyBytes)] }
        if scenario.usesTLS, let caFile { arguments += ["--ca-file", caFile] }
        return arguments
    }

    /// `2`, `0.5`: seconds without a trailing `.0`.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e9 ? String(Int(seconds)) : String(seconds)
    }
}
