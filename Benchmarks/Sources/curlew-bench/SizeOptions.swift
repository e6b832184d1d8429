import ArgumentParser

/// How much each run does.
struct SizeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Measured seconds of each load run (default: 2, or 1 with --quick).", valueName: "seconds"))
    var duration: Double?

    @Option(help: "Cap on the measured requests of each load run (default: none, the duration decides; the stream scenario measures 3 bodies).")
    var requests: Int?

    @Option(help: "Warm-up requests before each measured phase (default: the client's own, 1,000; 200 with --quick; 3 for 16 MiB, 200 for 64 KiB, 1 streamed body).")
    var warmupRequests: Int?

    @Option(help: ArgumentHelp("Length of the idle scenario (default: 10, or 2 with --quick).", valueName: "seconds"))
    var idleSeconds: Double?

    @Option(help: ArgumentHelp("Time limit of one run; a client still running then is killed and its row failed (default: from the scenario).", valueName: "seconds"))
    var timeout: Double?

    /// Rejects values that make no sense before anything starts.
    func validate() throws {
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
        if let requests, requests < 1 { throw ValidationError("--requests must be at least 1") }
        if let warmupRequests, warmupRequests < 0 { throw ValidationError("--warmup-requests must not be negative") }
        if let idleSeconds, !(idleSeconds > 0) { throw ValidationError("--idle-seconds must be positive") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be positive") }
    }

    /// The sizes, with the defaults of a full or a quick run.
    func runSize(quick: Bool) -> RunSize {
        RunSize(
            durationSeconds: self.duration ?? (quick ? 1 : 2),
            requests: self.requests,
            warmupRequests: self.warmupRequests ?? (quick ? 200 : nil),
            idleSeconds: self.idleSeconds ?? (quick ? 2 : 10),
            threadsRequests: 2_000,
            threadsDelayMilliseconds: 1_000,
            timeoutSeconds: self.timeout
        )
    }
}
