/// A client the runner can measure: a name given with `--client` and the executable that implements it
/// (built beside the runner), or `wrk`.
struct BenchClient: Sendable, Hashable, Identifiable {
    /// Name used with `--client`, `--clients` and in the report.
    var name: String
    /// The Benchmarks product that implements it; nil for `wrk`, which is found on `PATH`.
    var product: String?
    /// One line on what it is.
    var summary: String
    /// Made for one scenario (the batch clients): it takes part only where a scenario names it.
    var isDedicated = false
    /// Built only when its toolchain is installed (`go`): when it is missing its rows are marked
    /// unsupported, not failed.
    var isOptional = false

    /// ``name``.
    var id: String { self.name }
    /// Whether this is `wrk`, driven with its own command line instead of the client contract.
    var isWrk: Bool { self.product == nil }
}

extension BenchClient {
    /// The baseline of the "× curl-c" ratios: the same libcurl, no Swift.
    static let curlC = "curl-c"
    /// The baseline of the "× curlew-dispatch" ratios: the dispatch backend with a source per socket
    /// (the default is `curlew-dispatch-epoll`); a fixed baseline keeps the ratios of runs comparable.
    static let curlewDispatch = "curlew-dispatch"

    /// Every client, in report order: the ceiling, the floor, Curlew, its peers, the rejected designs.
    static let all: [BenchClient] = [
        BenchClient(name: "wrk", product: nil, summary: "wrk -t1: the server's ceiling (C, not a library)"),
        BenchClient(name: "curl-c", product: "bench-curl-c", summary: "C curl-multi loop, epoll + socket_action"),
        BenchClient(name: "curlew-dispatch", product: "bench-curlew",
                    summary: "Curlew, DispatchScheduler (a source per socket), RequestOperation on an OperationQueue"),
        BenchClient(name: "curlew-dispatch-engine", product: "bench-curlew",
                    summary: "Curlew, DispatchScheduler (a source per socket), TransferEngine directly: a delegate per transfer (engine.stream in the stream scenario)"),
        BenchClient(name: "curlew-dispatch-epoll", product: "bench-curlew",
                    summary: "Curlew, DispatchScheduler (one epoll source, the default), RequestOperation on an OperationQueue"),
        BenchClient(name: "curlew-dispatch-epoll-engine", product: "bench-curlew",
                    summary: "Curlew, DispatchScheduler (one epoll source, the default), TransferEngine directly: a delegate per transfer (engine.stream in the stream scenario)"),
        BenchClient(name: "curlew-runloop", product: "bench-curlew",
                    summary: "Curlew, RunLoopScheduler (CFSocket), RequestOperation on an OperationQueue"),
        BenchClient(name: "curlew-runloop-engine", product: "bench-curlew",
                    summary: "Curlew, RunLoopScheduler (CFSocket), TransferEngine directly: a delegate per transfer (engine.stream in the stream scenario)"),
        BenchClient(name: "curlew-runloop-epoll", product: "bench-curlew",
                    summary: "Curlew, RunLoopScheduler (epoll source), RequestOperation on an OperationQueue"),
        BenchClient(name: "curlew-runloop-epoll-engine", product: "bench-curlew",
                    summary: "Curlew, RunLoopScheduler (epoll source), TransferEngine directly: a delegate per transfer (engine.stream in the stream scenario)"),
        BenchClient(name: "curlew-dispatch-epoll-engine-async", product: "bench-curlew",
                    summary: "Curlew, DispatchScheduler (one epoll source, the default), TransferEngine's async API: try await engine.execute, one Task per request in flight"),
        BenchClient(name: "curlew-runloop-epoll-engine-async", product: "bench-curlew",
                    summary: "Curlew, RunLoopScheduler (epoll source), TransferEngine's async API: try await engine.execute, one Task per request in flight"),
        BenchClient(name: "curlew-dispatch-manager", product: "bench-curlew",
                    summary: "Curlew, DispatchScheduler (a source per socket), RequestOperationManager's async path straight over the engine: try await response(for:as:) (stream(for:) in the stream scenario)"),
        BenchClient(name: "curlew-dispatch-epoll-manager", product: "bench-curlew",
                    summary: "Curlew, DispatchScheduler (one epoll source, the default), RequestOperationManager's async path straight over the engine: try await response(for:as:) (stream(for:) in the stream scenario)"),
        BenchClient(name: "curlew-runloop-epoll-manager", product: "bench-curlew",
                    summary: "Curlew, RunLoopScheduler (epoll source), RequestOperationManager's async path straight over the engine: try await response(for:as:) (stream(for:) in the stream scenario)"),
        BenchClient(name: "curlew-dispatch-batch", product: "bench-curlew",
                    summary: "Curlew, DispatchScheduler (a source per socket), RequestOperations as one OperationBatch (batch scenario only)",
                    isDedicated: true),
        BenchClient(name: "curlew-runloop-batch", product: "bench-curlew",
                    summary: "Curlew, RunLoopScheduler (CFSocket), RequestOperations as one OperationBatch (batch scenario only)",
                    isDedicated: true),
        BenchClient(name: "curlew-runloop-epoll-batch", product: "bench-curlew",
                    summary: "Curlew, RunLoopScheduler (epoll source), RequestOperations as one OperationBatch (batch scenario only)",
                    isDedicated: true),
        BenchClient(name: "urlsession", product: "bench-urlsession", summary: "FoundationNetworking URLSession"),
        BenchClient(name: "async-http-client", product: "bench-ahc", summary: "AsyncHTTPClient (SwiftNIO)"),
        BenchClient(name: "go-net-http", product: "bench-go",
                    summary: "Go's standard net/http (Benchmarks/go-client; built by Scripts/bench.sh when go is installed)",
                    isOptional: true),
        BenchClient(name: "main-runloop", product: "bench-teaching",
                    summary: "rejected design: every transfer on the main run loop"),
        BenchClient(name: "thread-per-operation", product: "bench-teaching",
                    summary: "rejected design: a run-loop thread per operation"),
    ]
}
