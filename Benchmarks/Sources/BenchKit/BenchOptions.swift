/// The client command line shared by every client binary (the C one parses the same flags):
///
/// ```
/// <binary> --client NAME --url URL --scenario get|stream|post|h2|idle|lateness|batch --concurrency C
///          [--connections K] [--requests N] [--duration-seconds S] [--warmup-requests W] [--body-bytes B] [--ca-file PATH]
/// ```
///
/// The measured phase ends after `N` completions or `S` seconds, whichever comes first. Without
/// either, `N` is 10 000 (`idle`: `S` is 5). `W` defaults to `min(N / 10, 1000)` with `N`, to 1000
/// for a duration-only run, and to 0 for `idle` (its measured phase starts once the requests are
/// sent; see ``idleSettleSeconds``).
public struct BenchOptions: Sendable, Hashable {
    /// `--client`: which client of the binary runs, e.g. `curlew-dispatch-engine`.
    public var client: String
    /// `--url`: the URL every request goes to.
    public var url: String
    /// `--scenario`.
    public var scenario: Scenario
    /// `--concurrency`: transfers kept in flight.
    public var concurrency: Int
    /// `--connections`: the most connections a client opens to the server (its per-host limit);
    /// beyond it transfers wait in the client. Defaults to the concurrency.
    public var connections: Int
    /// `--requests`: completions in the measured phase; `nil` when only a duration bounds it.
    public var requests: Int?
    /// `--duration-seconds`: the longest measured phase; `nil` when only a count bounds it.
    public var durationSeconds: Double?
    /// `--warmup-requests`: completions before the measured phase starts (not measured).
    public var warmupRequests: Int
    /// `--body-bytes`: the request body size for `post`.
    public var bodyBytes: Int
    /// `--ca-file`: a PEM file of roots to trust (for `h2` over TLS).
    public var caFile: String?

    /// For `idle`: how long after the requests are started the measured phase begins, so that it
    /// covers the wait, not the connects.
    public static let idleSettleSeconds = 0.25

    /// The longest a warm-up may last: then the measured phase starts anyway (a client that
    /// collapses under the load is measured as it is, not killed while warming up).
    public static let maximumWarmupSeconds = 5.0

    /// The usage line printed with every argument error.
    public static let usage = """
        usage: --client NAME --url URL --scenario get|stream|post|h2|idle|lateness|batch --concurrency C \
        [--connections K] [--requests N] [--duration-seconds S] [--warmup-requests W] [--body-bytes B] [--ca-file PATH]
        """

    /// Creates options directly (tests, and clients that run a sub-load).
    public init(
        client: String, url: String, scenario: Scenario, concurrency: Int, requests: Int?,
        durationSeconds: Double?, warmupRequests: Int, bodyBytes: Int = 1024, caFile: String? = nil,
        connections: Int? = nil
    ) {
        self.client = client
        self.url = url
        self.scenario = scenario
        self.concurrency = concurrency
        self.connections = connections ?? concurrency
        self.requests = requests
        self.durationSeconds = durationSeconds
        self.warmupRequests = warmupRequests
        self.bodyBytes = bodyBytes
        self.caFile = caFile
    }

    /// Parses `arguments` (without the program name).
    ///
    /// - Throws: ``UsageError`` for an unknown flag, a missing or malformed value, or a missing
    ///   required flag.
    public static func parse(_ arguments: [String]) throws(UsageError) -> BenchOptions {
        var values: [String: String] = [:]
        var index = 0
        let known: Set = [
            "--client", "--url", "--scenario", "--concurrency", "--connections", "--requests", "--duration-seconds",
            "--warmup-requests", "--body-bytes", "--ca-file",
        ]
        while index < arguments.count {
            let flag = arguments[index]
            guard known.contains(flag) else { throw UsageError("unknown argument \"\(flag)\"\n\(Self.usage)") }
            guard index + 1 < arguments.count else { throw UsageError("\(flag) needs a value\n\(Self.usage)") }
            values[flag] = arguments[index + 1]
            index += 2
        }

        func required(_ flag: String) throws(UsageError) -> String {
            guard let value = values[flag], !value.isEmpty else { throw UsageError("missing \(flag)\n\(Self.usage)") }
            return value
        }
        func integer(_ flag: String, minimum: Int) throws(UsageError) -> Int? {
            guard let text = values[flag] else { return nil }
            guard let value = Int(text), value >= minimum else {
                throw UsageError("\(flag) must be an integer >= \(minimum), not \"\(text)\"")
            }
            return value
        }

        let client = try required("--client")
        let url = try required("--url")
        let scenarioText = try required("--scenario")
        guard let scenario = Scenario(rawValue: scenarioText) else {
            throw UsageError("unknown scenario \"\(scenarioText)\" (get, stream, post, h2, idle, lateness, batch)")
        }
        guard let concurrency = try integer("--concurrency", minimum: 1) else {
            throw UsageError("missing --concurrency\n\(Self.usage)")
        }
        let connections = try integer("--connections", minimum: 1)
        var requests = try integer("--requests", minimum: 1)
        var duration: Double?
        if let text = values["--duration-seconds"] {
            guard let value = Double(text), value.isFinite, value > 0 else {
                throw UsageError("--duration-seconds must be a positive number, not \"\(text)\"")
            }
            duration = value
        }
        if requests == nil && duration == nil {
            if scenario == .idle { duration = 5 } else { requests = 10_000 }
        }
        let defaultWarmup = scenario == .idle ? 0 : requests.map { min($0 / 10, 1000) } ?? 1000
        let warmup = try integer("--warmup-requests", minimum: 0) ?? defaultWarmup
        let bodyBytes = try integer("--body-bytes", minimum: 0) ?? 1024
        return BenchOptions(
            client: client, url: url, scenario: scenario, concurrency: concurrency, requests: requests,
            durationSeconds: duration, warmupRequests: warmup, bodyBytes: bodyBytes, caFile: values["--ca-file"],
            connections: connections)
    }
}
