/// Everything a run produced: what `results.json` holds and every other output is made from.
struct BenchmarkReport: Codable, Sendable {
    /// A scenario as run: what it is, and who served it where.
    struct ScenarioInfo: Codable, Sendable {
        var id: String
        var title: String
        var summary: String
        /// The clients' `--scenario`.
        var clientScenario: String
        var concurrencies: [Int]
        var headline: MatrixScenario.Headline
        /// Who served it, and the URL every client requested (nil when skipped).
        var server: String?
        var url: String?
        /// Why it was not run, if it was not.
        var skipped: String?
    }

    /// The machine and software.
    var environment: MachineEnvironment
    /// Passes over the matrix.
    var repeats: Int
    /// The scaling knobs.
    var size: RunSize
    /// The scenarios selected, in report order.
    var scenarios: [ScenarioInfo]
    /// The clients selected, in report order.
    var clients: [String]
    /// Every run, in the order they ran.
    var runs: [RunRecord]
    /// One row per client and cell.
    var aggregates: [Aggregate]
    /// Wall time of the whole matrix (servers started to stopped), seconds.
    var wallSeconds: Double

    /// Whether any row failed.
    var hasFailures: Bool { self.aggregates.contains { $0.status == .failed } }
}
