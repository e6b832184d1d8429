import BenchKit

/// What one run produced: the client's own report (or the one the runner made from wrk's output), how
/// the process went, and whether the row counts.
struct RunRecord: Codable, Sendable {
    /// Whether a run counts.
    enum Status: String, Codable, Sendable {
        /// It ran, reported, and had no errors.
        case ok
        /// It crashed, hung, exited non-zero, printed something unreadable, or had transfer errors.
        case failed
        /// The client cannot do this scenario (it said so with `requests: 0` and a note), or the tool is
        /// not installed.
        case unsupported
    }

    /// ``MatrixScenario/id``.
    var scenario: String
    /// Transfers in flight.
    var concurrency: Int
    /// ``BenchClient/name``.
    var client: String
    /// Which pass over the matrix, from 1.
    var repeatNumber: Int
    /// Whether the row counts.
    var status: Status
    /// Why it failed or is unsupported.
    var reason: String?
    /// The URL requested.
    var url: String
    /// Who served it (``ServerEndpoint/label``).
    var server: String
    /// The report (the client's JSON line; for wrk, made from its text output).
    var result: ClientResult?
    /// Metrics the tool cannot report (their zeroes in `result` mean "not measured"), e.g.
    /// `latency.p999` for wrk.
    var unavailable: [String]
    /// The kernel's accounting for the whole client process (start-up and warm-up included), as the runner
    /// saw it: CPU and context switches; peak RSS only where sampled (wrk), else 0 (the client's own figure
    /// for its measured phase is in `result`).
    var processUsage: ChildResourceUsage
    /// How the process ended (`exit 0`, `signal 9`, …).
    var termination: String
    /// From spawn to exit, seconds.
    var wallSeconds: Double
    /// The command line, for reproducing the run by hand.
    var commandLine: [String]

    /// The cell it belongs to.
    var cell: Cell { Cell(scenario: self.scenario, concurrency: self.concurrency) }
}
