import Foundation

/// Writes a report's files into the output folder: `results.md`, `results.csv`, `runs.csv`,
/// `results.json` and the SVG charts.
struct ReportWriter {
    /// The output folder (created if missing).
    var folder: String

    /// Writes every file; returns the Markdown (as printed on stdout) and the names of the files written.
    func write(_ report: BenchmarkReport, scenarios: [MatrixScenario]) throws -> (markdown: String, files: [String]) {
        try FileManager.default.createDirectory(atPath: self.folder, withIntermediateDirectories: true)
        var files: [String] = []
        let charts = self.charts(report, scenarios: scenarios)
        for (name, svg) in charts {
            try self.save(svg, as: name)
            files.append(name)
        }
        let markdown = MarkdownReport.render(report, scenarios: scenarios)
        var document = markdown
        if !charts.isEmpty {
            document += "\n## Charts\n\n" + charts.map { "![\($0.name)](\($0.name))\n" }.joined(separator: "\n")
        }
        try self.save(document, as: "results.md")
        try self.save(CSVReport.aggregates(report.aggregates), as: "results.csv")
        try self.save(CSVReport.runs(report.runs), as: "runs.csv")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN"
        )
        try self.save(String(decoding: try encoder.encode(report), as: UTF8.self) + "\n", as: "results.json")
        return (markdown, ["results.md", "results.csv", "runs.csv", "results.json"] + files)
    }

    private func save(_ text: String, as name: String) throws {
        try text.write(toFile: self.folder + "/" + name, atomically: true, encoding: .utf8)
    }

    /// File name → SVG, in report order.
    private func charts(_ report: BenchmarkReport, scenarios: [MatrixScenario]) -> [(name: String, svg: String)] {
        var charts: [(String, String)] = []
        let passes = "median of \(report.repeats) pass\(report.repeats == 1 ? "" : "es")"
        for scenario in scenarios {
            let rows = report.aggregates.filter { $0.scenario == scenario.id }
            if let svg = ThroughputChart.render(
                scenario: scenario, aggregates: rows, clients: report.clients, repeats: report.repeats
            ) {
                charts.append(("throughput-\(scenario.id).svg", svg))
            }
            for concurrency in scenario.concurrencies {
                let cell = rows.filter { $0.concurrency == concurrency && $0.status == .ok }
                let chart: String?
                switch scenario.headline {
                case .requestsPerSecond, .megabytesPerSecond, .threads:
                    chart = PercentileChart.render(
                        title: "\(scenario.title), concurrency \(concurrency): latency",
                        subtitle: "per request, start to completion; \(passes) (wrk has no p99.9)",
                        series: ["p50", "p90", "p99", "p99.9"],
                        rows: cell.map {
                            .init(client: $0.client, values: [$0.latencyP50?.median, $0.latencyP90?.median,
                                                              $0.latencyP99?.median, $0.latencyP999?.median])
                        }
                    )
                case .mainThreadLateness:
                    chart = PercentileChart.render(
                        title: "Main-thread lateness under load (concurrency \(concurrency))",
                        subtitle: "how late a 1 ms main-thread tick fires while the client runs small GETs; \(passes)",
                        series: ["p50", "p99", "max"],
                        rows: cell.map {
                            .init(client: $0.client, values: [$0.latenessP50?.median, $0.latenessP99?.median,
                                                              $0.latenessMax?.median])
                        }
                    )
                case .idleCost:
                    chart = nil
                }
                if let chart {
                    let prefix = scenario.headline == .mainThreadLateness ? "lateness" : "latency-\(scenario.id)"
                    charts.append(("\(prefix)-c\(concurrency).svg", chart))
                }
            }
        }
        return charts
    }
}
