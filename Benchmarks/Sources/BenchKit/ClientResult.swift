/// What one client process reports for one run: the contract between the runner (`curlew-bench`)
/// and every client (`bench-*`, the C one included). A client prints exactly one line of this as
/// JSON on stdout when it is done; everything else it says goes to stderr.
///
/// Times are microseconds; counts are totals over the measured phase (after warm-up).
public struct ClientResult: Codable, Sendable, Hashable {
    /// The client's name as given with `--client`, e.g. `"curlew-dispatch"`.
    public var client: String
    /// The scenario as given with `--scenario`: `get`, `stream`, `post`, `h2`, `idle`, `lateness` or `batch`.
    public var scenario: String
    /// Transfers kept in flight.
    public var concurrency: Int
    /// Transfers completed in the measured phase (successes and errors).
    public var requests: Int
    /// Transfers that failed (transport error or a status other than 2xx). A row with errors is failed.
    public var errors: Int
    /// Wall time of the measured phase, seconds.
    public var elapsedSeconds: Double
    /// Response body bytes received in the measured phase.
    public var bytesReceived: Int64
    /// Per-request latency percentiles (start to completion), microseconds; zero for `idle`.
    public var latency: Percentiles
    /// CPU time of the whole process (all threads) in the measured phase, `getrusage`.
    public var cpuUserMicros: Int64
    public var cpuSystemMicros: Int64
    /// Peak resident set size of the process, KiB (`ru_maxrss`).
    public var maxRSSKiB: Int64
    /// Resident set size of the process once the client was set up, before its first request, KiB
    /// (`/proc/self/statm`): the baseline the peak is read against. `nil` where not measured.
    public var startupRSSKiB: Int64?
    /// Most threads seen in the process (`/proc/self/task`, sampled every 10 ms).
    public var threadsPeak: Int
    /// Context switches in the measured phase (`ru_nvcsw`, `ru_nivcsw`).
    public var voluntaryContextSwitches: Int64
    public var involuntaryContextSwitches: Int64
    /// `lateness` only: how late a 1 ms main-thread tick ran while the load ran, microseconds.
    public var mainThreadLateness: Percentiles?
    /// Free-form remarks (e.g. why a scenario is not supported by this client).
    public var note: String?

    public init(
        client: String, scenario: String, concurrency: Int, requests: Int, errors: Int,
        elapsedSeconds: Double, bytesReceived: Int64, latency: Percentiles,
        cpuUserMicros: Int64, cpuSystemMicros: Int64, maxRSSKiB: Int64, threadsPeak: Int,
        voluntaryContextSwitches: Int64, involuntaryContextSwitches: Int64,
        mainThreadLateness: Percentiles? = nil, note: String? = nil, startupRSSKiB: Int64? = nil
    ) {
        self.client = client
        self.scenario = scenario
        self.concurrency = concurrency
        self.requests = requests
        self.errors = errors
        self.elapsedSeconds = elapsedSeconds
        self.bytesReceived = bytesReceived
        self.latency = latency
        self.cpuUserMicros = cpuUserMicros
        self.cpuSystemMicros = cpuSystemMicros
        self.maxRSSKiB = maxRSSKiB
        self.startupRSSKiB = startupRSSKiB
        self.threadsPeak = threadsPeak
        self.voluntaryContextSwitches = voluntaryContextSwitches
        self.involuntaryContextSwitches = involuntaryContextSwitches
        self.mainThreadLateness = mainThreadLateness
        self.note = note
    }

    /// Requests per second over the measured phase.
    public var requestsPerSecond: Double { self.elapsedSeconds > 0 ? Double(self.requests) / self.elapsedSeconds : 0 }
    /// CPU microseconds (user + system) per request.
    public var cpuMicrosPerRequest: Double {
        self.requests > 0 ? Double(self.cpuUserMicros + self.cpuSystemMicros) / Double(self.requests) : 0
    }
}

/// Latency percentiles in microseconds.
public struct Percentiles: Codable, Sendable, Hashable {
    public var p50: Double
    public var p90: Double
    public var p99: Double
    public var p999: Double
    public var max: Double

    public init(p50: Double, p90: Double, p99: Double, p999: Double, max: Double) {
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.p999 = p999
        self.max = max
    }

    public static let zero = Percentiles(p50: 0, p90: 0, p99: 0, p999: 0, max: 0)
}
