/// What `wrk --latency` printed, parsed (see ``WrkOutputParser``).
struct WrkReport: Sendable, Hashable {
    /// Completed requests.
    var requests: Int
    /// Length of the run as wrk measured it, seconds.
    var seconds: Double
    /// Bytes read (headers included), as wrk rounds them.
    var bytesRead: Double
    /// Latency percentiles from the distribution, microseconds.
    var p50: Double
    var p75: Double
    var p90: Double
    var p99: Double
    /// Maximum latency from the thread statistics, microseconds.
    var max: Double
    /// Socket errors (connect, read, write, timeout) plus non-2xx/3xx responses.
    var errors: Int
    /// `Requests/sec`.
    var requestsPerSecond: Double
}
