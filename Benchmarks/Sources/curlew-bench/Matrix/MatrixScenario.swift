/// One kind of measurement: what the clients do, against what, at which concurrencies, and which
/// figure is its headline.
struct MatrixScenario: Sendable, Hashable, Identifiable {
    /// The headline figure of a scenario (what its ratios compare and its charts show).
    enum Headline: String, Codable, Sendable {
        /// Requests per second.
        case requestsPerSecond
        /// Body megabytes (10⁶ bytes) per second.
        case megabytesPerSecond
        /// CPU time and wake-ups of a client doing nothing.
        case idleCost
        /// How late a 1 ms main-thread tick runs under load.
        case mainThreadLateness
        /// Threads with many transfers in flight.
        case threads
    }

    /// Short name used on the command line and in files, e.g. `get-small`.
    var id: String
    /// Heading in the report, e.g. `Small GET (13 B)`.
    var title: String
    /// One sentence on what is measured.
    var summary: String
    /// The client's `--scenario`.
    var clientScenario: String
    /// What is requested.
    var resource: Resource
    /// Transfers kept in flight; one matrix cell per value.
    var concurrencies: [Int]
    /// The most connections a client may open to the server (`--connections`); transfers beyond
    /// them wait in the client. `nil`: as many as transfers in flight.
    var connections: Int? = nil
    /// How the clients reach the server.
    enum Transport: String, Sendable, Hashable {
        /// Plain HTTP/1.1.
        case plain
        /// TLS, ALPN `h2` and `http/1.1`.
        case tls
        /// TLS from a listener that offers ALPN `http/1.1` only: an HTTPS server without HTTP/2.
        case tlsHTTP1Only
    }

    /// How the clients reach the server.
    var transport: Transport
    /// Whether the clients speak TLS (and need the CA file).
    var usesTLS: Bool { self.transport != .plain }
    /// Request body size (POST).
    var bodyBytes: Int?
    /// What the scenario is about.
    var headline: Headline
    /// Whether `wrk` can take part (plain HTTP/1.1 load).
    var wrkCanRun: Bool
    /// The clients that take part, by name; `nil`: every client not made for one scenario (see
    /// ``BenchClient/isDedicated``).
    var participants: Set<String>? = nil
    /// Measured transfers of each run when the run is counted rather than timed: bodies so large that
    /// a timed phase would end in the middle of one and drop it. `nil`: timed (`--duration`).
    var countedTransfers: Int? = nil

    /// Whether clients generate load in it (everything but idle).
    var isLoad: Bool { self.headline != .idleCost }
}

extension MatrixScenario {
    /// Small GETs at rising concurrency: the per-request cost of each design.
    static let getSmall = MatrixScenario(
        id: "get-small", title: "Small GET (13 B)",
        summary: "GET of a 13-byte body over HTTP/1.1 keep-alive, N transfers in flight, refilled on completion.",
        clientScenario: "get", resource: .small, concurrencies: [1, 16, 128, 1024], transport: .plain,
        bodyBytes: nil, headline: .requestsPerSecond, wrkCanRun: true
    )
    /// Small GETs far beyond the connections: what waiting transfers cost a client.
    static let getQueued = MatrixScenario(
        id: "get-small-queued", title: "Small GET, 64 connections, up to 10,000 in flight",
        summary: "GET of a 13-byte body over at most 64 HTTP/1.1 keep-alive connections; at 10,000 in flight, 9,936 wait in the client for a connection.",
        clientScenario: "get", resource: .small, concurrencies: [64, 10_000], connections: 64, transport: .plain,
        bodyBytes: nil, headline: .requestsPerSecond, wrkCanRun: false
    )
    /// 64 KiB GETs.
    static let get64k = MatrixScenario(
        id: "get-64k", title: "64 KiB GET",
        summary: "GET of a 64 KiB body over HTTP/1.1 keep-alive.",
        clientScenario: "get", resource: .medium, concurrencies: [16], transport: .plain,
        bodyBytes: nil, headline: .requestsPerSecond, wrkCanRun: true
    )
    /// 16 MiB GETs, one at a time: bulk throughput.
    static let get16m = MatrixScenario(
        id: "get-16m", title: "16 MiB GET (MB/s)",
        summary: "Sequential GETs of a 16 MiB body on one connection; MB/s = 10⁶ body bytes per second.",
        clientScenario: "get", resource: .large, concurrencies: [1], transport: .plain,
        bodyBytes: nil, headline: .megabytesPerSecond, wrkCanRun: true
    )
    /// 1 GiB bodies read chunk by chunk as they arrive, one at a time: streaming throughput and memory.
    static let stream = MatrixScenario.streaming(.gibibyte)

    /// The `stream` scenario on bodies of `resource`.
    static func streaming(_ resource: Resource) -> MatrixScenario {
        let size = resource == .gibibyte ? "1 GiB" : "\((resource.bodyBytes ?? 0) >> 20) MiB"
        return MatrixScenario(
            id: "stream", title: "Streamed \(size) GET (MB/s, memory)",
            summary: "Sequential GETs of a \(size) body on one connection, each read chunk by chunk as it arrives and dropped, never held whole; MB/s = 10⁶ body bytes per second; RSS once the client is set up and at its peak.",
            clientScenario: "stream", resource: resource, concurrencies: [1], transport: .plain,
            bodyBytes: nil, headline: .megabytesPerSecond, wrkCanRun: false, countedTransfers: 3
        )
    }

    /// 1 KiB POSTs.
    static let post1k = MatrixScenario(
        id: "post-1k", title: "1 KiB POST",
        summary: "POST of a 1,024-byte body, answered 200, over HTTP/1.1 keep-alive.",
        clientScenario: "post", resource: .post, concurrencies: [16], transport: .plain,
        bodyBytes: 1024, headline: .requestsPerSecond, wrkCanRun: true
    )
    /// HTTP/2 over TLS, streams multiplexed on one connection.
    static let h2 = MatrixScenario(
        id: "h2", title: "HTTP/2 multiplexed GET (TLS)",
        summary: "GET of a 13-byte body over HTTPS with ALPN h2, the transfers multiplexed as streams.",
        clientScenario: "h2", resource: .small, concurrencies: [16, 128], transport: .tls,
        bodyBytes: nil, headline: .requestsPerSecond, wrkCanRun: false
    )
    /// Small GETs over HTTPS from a server without HTTP/2, far more in flight than connections.
    static let getTLSHTTP1 = MatrixScenario(
        id: "get-small-tls-http1", title: "Small GET over HTTPS from an HTTP/1.1-only server, 16 connections",
        summary: "GET of a 13-byte body over TLS from a listener offering ALPN http/1.1 only, over at most 16 keep-alive connections; 1,008 of the 1,024 in flight wait in the client for a connection.",
        clientScenario: "get", resource: .small, concurrencies: [1024], connections: 16, transport: .tlsHTTP1Only,
        bodyBytes: nil, headline: .requestsPerSecond, wrkCanRun: false
    )
    /// Main-thread lateness under load.
    static let lateness = MatrixScenario(
        id: "lateness", title: "Main-thread lateness under load",
        summary: "A 1 ms repeating tick on the main thread while the client runs small GETs; how late it fires.",
        clientScenario: "lateness", resource: .small, concurrencies: [128], transport: .plain,
        bodyBytes: nil, headline: .mainThreadLateness, wrkCanRun: false
    )
    /// An idle client.
    static let idle = MatrixScenario(
        id: "idle", title: "Idle client",
        summary: "The client set up and doing nothing (no transfers complete): CPU time and wake-ups.",
        clientScenario: "idle", resource: .delayed, concurrencies: [1], transport: .plain,
        bodyBytes: nil, headline: .idleCost, wrkCanRun: false
    )
    /// Thread growth with a thousand slow transfers in flight.
    static let threads = MatrixScenario(
        id: "threads", title: "Thread growth (1,000 transfers in flight)",
        summary: "1,000 slow GETs in flight at once (each answered after a delay): peak threads and memory.",
        clientScenario: "get", resource: .delayed, concurrencies: [1000], transport: .plain,
        bodyBytes: nil, headline: .threads, wrkCanRun: false
    )

    /// A thousand small GETs as one batch, against the same thousand operations queued without one.
    static let batch = MatrixScenario(
        id: "batch", title: "Batch of 1,000 small GETs",
        summary: "Waves of 1,000 small GETs queued at once: as one OperationBatch (curlew-*-batch) or as plain operations (curlew-*); the next wave once the last is over.",
        clientScenario: "batch", resource: .small, concurrencies: [1000], transport: .plain,
        bodyBytes: nil, headline: .requestsPerSecond, wrkCanRun: false,
        participants: [
            "curlew-dispatch", "curlew-dispatch-batch", "curlew-runloop", "curlew-runloop-batch",
            "curlew-runloop-epoll", "curlew-runloop-epoll-batch",
        ]
    )

    /// Every scenario, in report order.
    static let all: [MatrixScenario] = [
        .getSmall, .getQueued, .get64k, .get16m, .stream, .post1k, .h2, .getTLSHTTP1, .lateness, .idle, .threads, .batch,
    ]

    /// The reduced matrix of `--quick` (64 MiB streamed bodies, so that a debug build's smoke run stays short).
    static let quick: [MatrixScenario] = [
        .getSmall.with(concurrencies: [16]), .streaming(.mebibytes64), .post1k, .h2.with(concurrencies: [16]),
        .lateness.with(concurrencies: [16]), .idle,
    ]

    /// The same scenario at other concurrencies.
    func with(concurrencies: [Int]) -> MatrixScenario {
        var copy = self
        copy.concurrencies = concurrencies
        return copy
    }

    /// Whether `--concurrency` applies (the scenarios that sweep it).
    var sweepsConcurrency: Bool { self.concurrencies.count > 1 }

    /// Whether `client` takes part in this scenario.
    func admits(_ client: BenchClient) -> Bool {
        if client.isWrk && !self.wrkCanRun { return false }
        guard let participants = self.participants else { return !client.isDedicated }
        return participants.contains(client.name)
    }
}
