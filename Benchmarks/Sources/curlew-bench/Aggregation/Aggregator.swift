import BenchKit

/// Turns raw runs into one ``Aggregate`` per client and cell: medians and ranges over the repeats, and
/// ratios paired within each repeat (client ÷ baseline in the same pass, then the median of those), as in
/// the project's perf anchors: the machine's drift between passes cancels out of a paired ratio.
enum Aggregator {
    /// The aggregates of `records`, in the order of `scenarios` (then concurrency) and `clients`.
    static func aggregate(_ records: [RunRecord], scenarios: [MatrixScenario], clients: [BenchClient]) -> [Aggregate] {
        var byKey: [String: [RunRecord]] = [:]
        for record in records { byKey[self.key(record.cell, record.client), default: []].append(record) }
        var aggregates: [Aggregate] = []
        for scenario in scenarios {
            for concurrency in scenario.concurrencies {
                let cell = Cell(scenario: scenario.id, concurrency: concurrency)
                for client in clients {
                    guard let runs = byKey[self.key(cell, client.name)], !runs.isEmpty else { continue }
                    aggregates.append(self.aggregate(
                        runs, scenario: scenario, cell: cell, client: client.name,
                        curlC: byKey[self.key(cell, BenchClient.curlC)] ?? [],
                        curlewDispatch: byKey[self.key(cell, BenchClient.curlewDispatch)] ?? []
                    ))
                }
            }
        }
        return aggregates
    }

    /// The headline figure of a counted run: requests/s, or MB/s for the bulk scenario; nil for the
    /// scenarios whose headline is not a throughput (idle, threads).
    static func headline(of record: RunRecord, scenario: MatrixScenario) -> Double? {
        guard record.status == .ok, let result = record.result else { return nil }
        switch scenario.headline {
        case .requestsPerSecond, .mainThreadLateness: return result.requestsPerSecond
        case .megabytesPerSecond: return self.megabytesPerSecond(result)
        case .idleCost, .threads: return nil
        }
    }

    private static func key(_ cell: Cell, _ client: String) -> String {
        "\(cell.scenario)|\(cell.concurrency)|\(client)"
    }

    private static func megabytesPerSecond(_ result: ClientResult) -> Double {
        result.elapsedSeconds > 0 ? Double(result.bytesReceived) / result.elapsedSeconds / 1e6 : 0
    }

    private static func aggregate(
        _ runs: [RunRecord], scenario: MatrixScenario, cell: Cell, client: String, curlC: [RunRecord],
        curlewDispatch: [RunRecord]
    ) -> Aggregate {
        let counted = runs.filter { $0.status == .ok }
        let results = counted.compactMap(\.result)
        let status: RunRecord.Status
        if runs.contains(where: { $0.status == .failed }) {
            status = .failed
        } else if counted.isEmpty {
            status = .unsupported
        } else {
            status = .ok
        }
        var reasons: [String] = []
        for reason in runs.filter({ $0.status != .ok }).compactMap(\.reason) where !reasons.contains(reason) {
            reasons.append(reason)
        }
        var notes: [String] = []
        for note in results.compactMap(\.note) where !note.isEmpty && !notes.contains(note) { notes.append(note) }
        let unavailable = Array(Set(runs.flatMap(\.unavailable))).sorted()

        func summary(_ value: (ClientResult) -> Double) -> Summary? { Summary(results.map(value)) }
        func perRequest(_ value: (ClientResult) -> Int64) -> Summary? {
            Summary(results.filter { $0.requests > 0 }.map { Double(value($0)) / Double($0.requests) })
        }
        func available(_ name: String, _ summary: Summary?) -> Summary? {
            unavailable.contains(name) ? nil : summary
        }
        let hasLatency = scenario.isLoad
        let lateness = results.compactMap(\.mainThreadLateness)

        return Aggregate(
            scenario: cell.scenario, concurrency: cell.concurrency, client: client, status: status,
            runs: runs.count, okRuns: counted.count, reasons: reasons, notes: notes, unavailable: unavailable,
            requestsPerSecond: scenario.isLoad ? summary(\.requestsPerSecond) : nil,
            megabytesPerSecond: scenario.isLoad ? summary(self.megabytesPerSecond) : nil,
            latencyP50: hasLatency ? available("latency.p50", summary(\.latency.p50)) : nil,
            latencyP90: hasLatency ? available("latency.p90", summary(\.latency.p90)) : nil,
            latencyP99: hasLatency ? available("latency.p99", summary(\.latency.p99)) : nil,
            latencyP999: hasLatency ? available("latency.p999", summary(\.latency.p999)) : nil,
            cpuMicrosPerRequest: scenario.isLoad ? summary(\.cpuMicrosPerRequest) : nil,
            cpuMicros: summary { Double($0.cpuUserMicros + $0.cpuSystemMicros) },
            maxRSSMiB: summary { Double($0.maxRSSKiB) / 1024 },
            startupRSSMiB: Summary(results.compactMap { $0.startupRSSKiB.map { Double($0) / 1024 } }),
            rssGrowthMiB: Summary(results.compactMap { result in
                result.startupRSSKiB.map { Double(result.maxRSSKiB - $0) / 1024 }
            }),
            threadsPeak: available("threadsPeak", summary { Double($0.threadsPeak) }),
            voluntaryContextSwitches: summary { Double($0.voluntaryContextSwitches) },
            involuntaryContextSwitches: summary { Double($0.involuntaryContextSwitches) },
            voluntaryPerRequest: perRequest(\.voluntaryContextSwitches),
            involuntaryPerRequest: perRequest(\.involuntaryContextSwitches),
            latenessP50: Summary(lateness.map(\.p50)),
            latenessP99: Summary(lateness.map(\.p99)),
            latenessMax: Summary(lateness.map(\.max)),
            ratioToCurlC: self.pairedRatio(runs, to: curlC, scenario: scenario),
            ratioToCurlewDispatch: self.pairedRatio(runs, to: curlewDispatch, scenario: scenario)
        )
    }

    /// Headline ÷ baseline headline for each repeat where both counted, summarised.
    private static func pairedRatio(_ runs: [RunRecord], to baseline: [RunRecord], scenario: MatrixScenario) -> Summary? {
        var ratios: [Double] = []
        for run in runs {
            guard let value = self.headline(of: run, scenario: scenario),
                  let partner = baseline.first(where: { $0.repeatNumber == run.repeatNumber }),
                  let reference = self.headline(of: partner, scenario: scenario), reference > 0
            else { continue }
            ratios.append(value / reference)
        }
        return Summary(ratios)
    }
}
