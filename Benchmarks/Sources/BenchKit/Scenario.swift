/// What a client run measures; the `--scenario` argument.
public enum Scenario: String, Sendable, CaseIterable {
    /// GET the URL (the runner passes `/small`, `/64k` or `/16m`).
    case get
    /// GET the URL and read the body as it arrives, chunk by chunk, keeping none of it (the runner
    /// passes a 1 GiB body, 64 MiB with `--quick`): a client that can only hand over a whole body
    /// answers unsupported.
    case stream
    /// POST `--body-bytes` bytes to the URL.
    case post
    /// GET over HTTP/2 on TLS, multiplexed, trusting `--ca-file`.
    case h2
    /// C requests to a URL that answers slowly; CPU and wake-ups while they wait, over `--duration-seconds`.
    case idle
    /// The `get` load while a main-thread 1 ms tick measures how late it fires.
    case lateness
    /// GET in waves of C: C requests queued at once, the next wave once the whole wave is over
    /// (only Curlew's operation clients run it, as plain operations or as one `OperationBatch`).
    case batch

    /// Whether the scenario records per-request latency (`idle` reports zeros).
    public var measuresLatency: Bool { self != .idle }
}
