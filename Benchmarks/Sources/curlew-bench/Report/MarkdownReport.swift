/// The report as Markdown: a header (machine, versions, command, method, servers), then per scenario a
/// table per concurrency (and a req/s-by-concurrency overview where it sweeps), failed rows marked.
enum MarkdownReport {
    /// The whole report.
    static func render(_ report: BenchmarkReport, scenarios: [MatrixScenario]) -> String {
        var out = self.header(report) + self.clientNotes(report)
        for scenario in scenarios {
            guard let info = report.scenarios.first(where: { $0.id == scenario.id }) else { continue }
            out += "\n## \(scenario.title)\n\n\(scenario.summary)"
            if let skipped = info.skipped {
                out += "\n\n*Not run: \(skipped).*\n"
                continue
            }
            out += " Served by \(info.server ?? "?").\n"
            let rows = report.aggregates.filter { $0.scenario == scenario.id }
            if scenario.concurrencies.count > 1 {
                out += "\n" + self.overview(rows, scenario: scenario, clients: report.clients)
            }
            for concurrency in scenario.concurrencies {
                let cellRows = rows.filter { $0.concurrency == concurrency }
                guard !cellRows.isEmpty else { continue }
                if scenario.concurrencies.count > 1 || scenario.headline == .requestsPerSecond {
                    out += "\n### \(scenario.title), concurrency \(concurrency)\n"
                }
                out += "\n" + self.table(cellRows, scenario: scenario, size: report.size)
                out += self.notes(cellRows)
            }
        }
        return out
    }

    private static func header(_ report: BenchmarkReport) -> String {
        let environment = report.environment
        let minutes = report.wallSeconds / 60
        var out = """
            # Curlew benchmark

            - **Date:** \(environment.date)
            - **Command:** `\(environment.commandLine)`
            - **Machine:** \(environment.machineLine) (load average at start: \(environment.loadAverage))
            - **Versions:** \(environment.versionsLine)
            - **Method:** \(report.repeats) interleaved pass\(report.repeats == 1 ? "" : "es") over the matrix, \
            each client in a process of its own. Values are medians over the passes, ± half their range. \
            Ratios (× curl-c, × curlew-dispatch) are paired: client ÷ baseline within one pass, then the \
            median over passes, range in parentheses. Latency: per request, start to completion. CPU: \
            user + system over the measured phase (getrusage), per request. RSS: peak. cs: context \
            switches (vol. = the process blocked and woke up; invol. = preempted). MB/s tables add the RSS \
            once the client is set up (before its first request) and the peak's growth over it, per run. \
            wrk's CPU, RSS and cs are its whole process's (wait4) and it has no p99.9.
            - **Took:** \(Format.significant(minutes)) min

            | scenario | server | URL |
            | --- | --- | --- |

            """
        for info in report.scenarios {
            out += "| \(info.id) | \(Format.cell(info.server ?? "not run: " + (info.skipped ?? "?"))) | "
                + "\(info.url.map { "`\($0)`" } ?? Format.none) |\n"
        }
        return out
    }

    /// Requests/s (or MB/s) by concurrency, one row per client.
    private static func overview(_ rows: [Aggregate], scenario: MatrixScenario, clients: [String]) -> String {
        let unit = scenario.headline == .megabytesPerSecond ? "MB/s" : "Requests/s"
        var out = "**\(unit) by concurrency** (median ±half-range)\n\n| client |"
            + scenario.concurrencies.map { " C=\($0) |" }.joined() + "\n| --- |"
            + scenario.concurrencies.map { _ in " ---: |" }.joined() + "\n"
        for client in clients {
            let mine = rows.filter { $0.client == client }
            guard !mine.isEmpty else { continue }
            out += "| \(client) |"
            for concurrency in scenario.concurrencies {
                guard let row = mine.first(where: { $0.concurrency == concurrency }) else {
                    out += " \(Format.none) |"
                    continue
                }
                let value = Format.spread(scenario.headline == .megabytesPerSecond ? row.megabytesPerSecond : row.requestsPerSecond)
                out += " " + self.marked(value, row) + " |"
            }
            out += "\n"
        }
        return out
    }

    /// The table of one cell.
    private static func table(_ rows: [Aggregate], scenario: MatrixScenario, size: RunSize) -> String {
        let columns: [(String, (Aggregate) -> String)]
        let perRequestCPU: (Aggregate) -> String = { Format.median($0.cpuMicrosPerRequest, Format.micros) }
        let rss: (Aggregate) -> String = { Format.median($0.maxRSSMiB) }
        let threads: (Aggregate) -> String = { Format.median($0.threadsPeak, Format.count) }
        switch scenario.headline {
        case .requestsPerSecond, .megabytesPerSecond:
            let bulk = scenario.headline == .megabytesPerSecond
            // MB/s tables: the RSS once set up and the peak's growth over it (the streamed bodies' bound).
            let memory: [(String, (Aggregate) -> String)] = bulk
                ? [("RSS at start MiB", { Format.median($0.startupRSSMiB) }), ("peak RSS MiB", rss),
                   ("peak − start MiB", { Format.median($0.rssGrowthMiB) })]
                : [("RSS MiB", rss)]
            var load: [(String, (Aggregate) -> String)] = [
                (bulk ? "MB/s" : "req/s", { Format.spread(bulk ? $0.megabytesPerSecond : $0.requestsPerSecond) }),
                ("× curl-c", { self.ratio($0, baseline: BenchClient.curlC, $0.ratioToCurlC) }),
                ("× curlew-dispatch", { self.ratio($0, baseline: BenchClient.curlewDispatch, $0.ratioToCurlewDispatch) }),
                ("p50", { Format.median($0.latencyP50, Format.micros) }),
                ("p90", { Format.median($0.latencyP90, Format.micros) }),
                ("p99", { Format.median($0.latencyP99, Format.micros) }),
                ("p99.9", { Format.median($0.latencyP999, Format.micros) }),
                (bulk ? "CPU/transfer" : "CPU/req", perRequestCPU),
            ]
            load += memory
            load += [
                ("threads", threads),
                ("vol. cs/req", { Format.median($0.voluntaryPerRequest) }),
                ("invol. cs/req", { Format.median($0.involuntaryPerRequest) }),
            ]
            columns = load
        case .mainThreadLateness:
            columns = [
                ("lateness p50", { Format.median($0.latenessP50, Format.micros) }),
                ("lateness p99", { Format.median($0.latenessP99, Format.micros) }),
                ("lateness max", { Format.median($0.latenessMax, Format.micros) }),
                ("req/s", { Format.spread($0.requestsPerSecond) }),
                ("× curlew-dispatch", { self.ratio($0, baseline: BenchClient.curlewDispatch, $0.ratioToCurlewDispatch) }),
                ("latency p99", { Format.median($0.latencyP99, Format.micros) }),
                ("CPU/req", perRequestCPU),
                ("threads", threads),
            ]
        case .idleCost:
            let seconds = size.idleSeconds
            columns = [
                ("CPU over \(Format.seconds(seconds)) s", { Format.spread($0.cpuMicros, Format.micros) }),
                ("vol. cs (wake-ups)", { Format.spread($0.voluntaryContextSwitches) }),
                ("wake-ups/s", { Format.median($0.voluntaryContextSwitches) { Format.count($0 / seconds) } }),
                ("invol. cs", { Format.median($0.involuntaryContextSwitches, Format.count) }),
                ("RSS MiB", rss),
                ("threads", threads),
            ]
        case .threads:
            columns = [
                ("threads (peak)", { Format.spread($0.threadsPeak) }),
                ("RSS MiB", { Format.spread($0.maxRSSMiB) }),
                ("req/s", { Format.median($0.requestsPerSecond, Format.count) }),
                ("p99", { Format.median($0.latencyP99, Format.micros) }),
                ("CPU/req", perRequestCPU),
                ("vol. cs/req", { Format.median($0.voluntaryPerRequest) }),
            ]
        }
        var out = "| client |" + columns.map { " \($0.0) |" }.joined() + "\n| --- |"
            + columns.map { _ in " ---: |" }.joined() + "\n"
        for row in rows {
            out += "| " + self.marked(row.client, row) + " |" + columns.map { " " + Format.cell($0.1(row)) + " |" }.joined() + "\n"
        }
        return out
    }

    /// `FAILED` and `n/a` marks.
    private static func marked(_ text: String, _ row: Aggregate) -> String {
        switch row.status {
        case .ok: return text
        case .failed: return "\(text) **FAILED**"
        case .unsupported: return "\(text) (n/a)"
        }
    }

    private static func ratio(_ row: Aggregate, baseline: String, _ summary: Summary?) -> String {
        row.client == baseline && summary != nil ? "base" : Format.ratio(summary)
    }

    /// Why rows failed or are not applicable.
    private static func notes(_ rows: [Aggregate]) -> String {
        var lines: [String] = []
        for row in rows where row.status != .ok {
            let reasons = row.reasons.map { String($0.prefix(300)) }.joined(separator: "; ")
            if row.status == .failed {
                lines.append("- **\(row.client) FAILED** (\(row.okRuns) of \(row.runs) runs counted): \(reasons)")
            } else {
                lines.append("- \(row.client): n/a — \(reasons)")
            }
        }
        return lines.isEmpty ? "" : "\n" + lines.joined(separator: "\n") + "\n"
    }

    /// What each client is, and what it noted about its runs (once per distinct note).
    private static func clientNotes(_ report: BenchmarkReport) -> String {
        var out = "\n## Clients\n\n"
        for name in report.clients {
            let summary = BenchClient.all.first { $0.name == name }?.summary ?? ""
            out += "- **\(name)**: \(summary)"
            var notes: [String] = []
            for row in report.aggregates where row.client == name && row.client != "wrk" {
                for note in row.notes where !notes.contains(note) { notes.append(note) }
            }
            notes = notes.filter { note in !notes.contains { $0 != note && $0.contains(note) } }  // keep the fullest
            if !notes.isEmpty { out += ". Noted: " + notes.map { String($0.prefix(300)) }.joined(separator: "; ") }
            out += "\n"
        }
        return out
    }
}
