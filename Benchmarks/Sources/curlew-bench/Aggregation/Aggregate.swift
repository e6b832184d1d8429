/// One client in one cell over all repeats: the row of the report.
///
/// Every figure is a ``Summary`` over the runs that counted (``RunRecord/Status/ok``); nil where no run
/// counted or the tool cannot measure it.
struct Aggregate: Codable, Sendable {
    /// ``MatrixScenario/id``.
    var scenario: String
    /// Transfers in flight.
    var concurrency: Int
    /// ``BenchClient/name``.
    var client: String
    /// `failed` if any repeat failed; `unsupported` if every repeat was; else `ok`.
    var status: RunRecord.Status
    /// Runs made.
    var runs: Int
    /// Runs that counted.
    var okRuns: Int
    /// Distinct reasons of the runs that failed or were unsupported.
    var reasons: [String]
    /// Distinct notes of the clients in the runs that counted.
    var notes: [String]
    /// Metrics the tool cannot report.
    var unavailable: [String]

    /// Requests per second.
    var requestsPerSecond: Summary?
    /// Body megabytes (10⁶ bytes) per second.
    var megabytesPerSecond: Summary?
    /// Latency percentiles, microseconds.
    var latencyP50: Summary?
    var latencyP90: Summary?
    var latencyP99: Summary?
    var latencyP999: Summary?
    /// Client CPU (user + system) per request, microseconds.
    var cpuMicrosPerRequest: Summary?
    /// Client CPU (user + system) over the measured phase, microseconds.
    var cpuMicros: Summary?
    /// Peak RSS, MiB.
    var maxRSSMiB: Summary?
    /// RSS once the client was set up, before its first request, MiB (clients that report it).
    var startupRSSMiB: Summary?
    /// Peak RSS minus the RSS at start-up, per run, MiB: what the load added.
    var rssGrowthMiB: Summary?
    /// Most threads seen.
    var threadsPeak: Summary?
    /// Context switches over the measured phase.
    var voluntaryContextSwitches: Summary?
    var involuntaryContextSwitches: Summary?
    /// Context switches per request.
    var voluntaryPerRequest: Summary?
    var involuntaryPerRequest: Summary?
    /// Main-thread tick lateness (the `lateness` scenario), microseconds.
    var latenessP50: Summary?
    var latenessP99: Summary?
    var latenessMax: Summary?
    /// The headline figure over `curl-c`'s in the same repeat, then summarised over repeats.
    var ratioToCurlC: Summary?
    /// The headline figure over `curlew-dispatch`'s in the same repeat, then summarised over repeats.
    var ratioToCurlewDispatch: Summary?

    /// The cell it belongs to.
    var cell: Cell { Cell(scenario: self.scenario, concurrency: self.concurrency) }
}
