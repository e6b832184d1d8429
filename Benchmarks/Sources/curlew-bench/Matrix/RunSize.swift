/// How much each run does: the scaling knobs of the command line, and the limits derived from them.
struct RunSize: Codable, Sendable, Hashable {
    /// Measured phase of each load run, seconds (`--duration`).
    var durationSeconds: Double
    /// Cap on the measured requests of each load run (`--requests`); nil: the duration decides.
    var requests: Int?
    /// Warm-up requests before the measured phase (`--warmup-requests`); nil: the client's default.
    var warmupRequests: Int?
    /// Length of the idle scenario, seconds.
    var idleSeconds: Double
    /// Transfers of one thread-growth run (in waves of its concurrency).
    var threadsRequests: Int
    /// How long each thread-growth response takes, milliseconds.
    var threadsDelayMilliseconds: Int
    /// Time limit of one run, seconds (`--timeout`); nil: derived from the scenario.
    var timeoutSeconds: Double?

    /// How long the slow response of the idle scenario takes: longer than the idle phase (and its
    /// start-up), so it never completes while the client is measured.
    var idleDelayMilliseconds: Int { Int(self.idleSeconds * 1000) + 60_000 }

    /// Warm-up requests for a load run of `scenario`: `--warmup-requests` (or the client's default, 1,000)
    /// for small bodies; at most 3 for 16 MiB (a thousand would take longer than the run), 200 for 64 KiB
    /// and 1 for the streamed bodies.
    func warmupRequests(for scenario: MatrixScenario) -> Int? {
        switch scenario.resource {
        case .gibibyte, .mebibytes64: return min(self.warmupRequests ?? 1, 1)
        case .large: return min(self.warmupRequests ?? 3, 3)
        case .medium: return min(self.warmupRequests ?? 200, 200)
        case .small, .post, .delayed: return self.warmupRequests
        }
    }

    /// The measured transfers of a run of `scenario` that is counted rather than timed (see
    /// ``MatrixScenario/countedTransfers``), capped by `--requests`; nil for a timed one.
    func countedTransfers(for scenario: MatrixScenario) -> Int? {
        scenario.countedTransfers.map { min($0, self.requests ?? $0) }
    }

    /// Body bytes one run of `scenario` moves when it is counted (warm-up included); nil otherwise.
    func countedBytes(for scenario: MatrixScenario) -> Double? {
        guard let transfers = self.countedTransfers(for: scenario), let bodyBytes = scenario.resource.bodyBytes else { return nil }
        return Double((self.warmupRequests(for: scenario) ?? 0) + transfers) * Double(bodyBytes)
    }

    /// The delay of `scenario`'s slow responses.
    func delayMilliseconds(for scenario: MatrixScenario) -> Int {
        switch scenario.headline {
        case .idleCost: return self.idleDelayMilliseconds
        case .threads: return self.threadsDelayMilliseconds
        default: return 0
        }
    }

    /// The time limit of one run of `scenario` at `concurrency`: generous (debug builds are slow), but a
    /// hung client costs at most this.
    func timeLimit(for scenario: MatrixScenario, concurrency: Int) -> Double {
        if let timeoutSeconds { return timeoutSeconds }
        switch scenario.headline {
        case .idleCost:
            return self.idleSeconds + 60
        case .threads:
            // Plus a second per 8 in flight: thread-per-operation's 1,000 threads, each with CFSocket
            // sources, share CoreFoundation's one socket-manager thread, which selects over all their
            // sockets; its 2,000 requests took 128 s (209 s of system CPU) and were killed at the
            // former 72 s limit in every pass of two full runs. The others take a few seconds.
            let waves = (self.threadsRequests + max(1, concurrency) - 1) / max(1, concurrency)
            return Double(waves + 2) * Double(self.threadsDelayMilliseconds) / 1000 * 3 + 60 + Double(concurrency / 8)
        default:
            if let bytes = self.countedBytes(for: scenario) {
                // At no less than 25 MB/s (a debug build's AsyncHTTPClient moves about 100).
                return 60 + bytes / 25e6
            }
            // Plus a second per 16 in flight: thread-per-operation at 1,024 needs most of a minute to
            // warm up, drain and end its threads (it finished in 64 s of the former 68 s limit).
            return self.durationSeconds * 4 + 60 + Double(concurrency / 16)
        }
    }
}
