import BenchKit
import Foundation

/// The report as CSV: `results.csv` (one row per client and cell, median/min/max of every figure) and
/// `runs.csv` (one row per run, as reported).
enum CSVReport {
    /// `results.csv`.
    static func aggregates(_ aggregates: [Aggregate]) -> String {
        let figures: [(String, (Aggregate) -> Summary?)] = [
            ("requests_per_second", \.requestsPerSecond), ("megabytes_per_second", \.megabytesPerSecond),
            ("latency_p50_us", \.latencyP50), ("latency_p90_us", \.latencyP90), ("latency_p99_us", \.latencyP99),
            ("latency_p999_us", \.latencyP999), ("cpu_us_per_request", \.cpuMicrosPerRequest),
            ("cpu_us", \.cpuMicros), ("max_rss_mib", \.maxRSSMiB), ("startup_rss_mib", \.startupRSSMiB),
            ("rss_growth_mib", \.rssGrowthMiB), ("threads_peak", \.threadsPeak),
            ("voluntary_cs", \.voluntaryContextSwitches), ("involuntary_cs", \.involuntaryContextSwitches),
            ("voluntary_cs_per_request", \.voluntaryPerRequest), ("involuntary_cs_per_request", \.involuntaryPerRequest),
            ("lateness_p50_us", \.latenessP50), ("lateness_p99_us", \.latenessP99), ("lateness_max_us", \.latenessMax),
            ("ratio_to_curl_c", \.ratioToCurlC), ("ratio_to_curlew_dispatch", \.ratioToCurlewDispatch),
        ]
        var header = ["scenario", "concurrency", "client", "status", "ok_runs", "runs"]
        for (name, _) in figures { header += [name, name + "_min", name + "_max"] }
        header.append("reasons")
        var lines = [self.line(header)]
        for row in aggregates {
            var fields = [row.scenario, String(row.concurrency), row.client, row.status.rawValue,
                          String(row.okRuns), String(row.runs)]
            for (_, figure) in figures {
                let summary = figure(row)
                fields += [summary.map { self.number($0.median) } ?? "", summary.map { self.number($0.min) } ?? "",
                           summary.map { self.number($0.max) } ?? ""]
            }
            fields.append(row.reasons.joined(separator: "; "))
            lines.append(self.line(fields))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `runs.csv`.
    static func runs(_ records: [RunRecord]) -> String {
        let header = [
            "repeat", "scenario", "concurrency", "client", "status", "requests", "errors", "elapsed_s",
            "bytes_received", "requests_per_second", "latency_p50_us", "latency_p90_us", "latency_p99_us",
            "latency_p999_us", "latency_max_us", "cpu_user_us", "cpu_system_us", "max_rss_kib", "startup_rss_kib", "threads_peak",
            "voluntary_cs", "involuntary_cs", "lateness_p50_us", "lateness_p99_us", "process_cpu_us",
            "process_max_rss_kib", "termination", "wall_s", "server", "url", "reason",
        ]
        var lines = [self.line(header)]
        for record in records {
            let result = record.result
            func value<T>(_ body: (ClientResult) -> T) -> String { result.map { "\(body($0))" } ?? "" }
            let fields: [String] = [
                String(record.repeatNumber), record.scenario, String(record.concurrency), record.client,
                record.status.rawValue, value(\.requests), value(\.errors),
                result.map { self.number($0.elapsedSeconds) } ?? "", value(\.bytesReceived),
                result.map { self.number($0.requestsPerSecond) } ?? "",
                result.map { self.number($0.latency.p50) } ?? "", result.map { self.number($0.latency.p90) } ?? "",
                result.map { self.number($0.latency.p99) } ?? "", result.map { self.number($0.latency.p999) } ?? "",
                result.map { self.number($0.latency.max) } ?? "", value(\.cpuUserMicros), value(\.cpuSystemMicros),
                value(\.maxRSSKiB), result?.startupRSSKiB.map(String.init) ?? "", value(\.threadsPeak),
                value(\.voluntaryContextSwitches),
                value(\.involuntaryContextSwitches),
                result?.mainThreadLateness.map { self.number($0.p50) } ?? "",
                result?.mainThreadLateness.map { self.number($0.p99) } ?? "",
                String(record.processUsage.userMicros + record.processUsage.systemMicros),
                String(record.processUsage.maxRSSKiB), record.termination, self.number(record.wallSeconds),
                record.server, record.url, record.reason ?? "",
            ]
            lines.append(self.line(fields))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Fields quoted where needed (RFC 4180).
    private static func line(_ fields: [String]) -> String {
        fields.map { field in
            guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
            return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }.joined(separator: ",")
    }

    /// A number without needless digits.
    private static func number(_ value: Double) -> String {
        guard value.isFinite else { return "" }
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: "%.3f", value)
    }
}
