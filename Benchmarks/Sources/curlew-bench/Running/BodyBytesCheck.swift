import BenchKit

/// Whether a run's body bytes add up: in a scenario whose resource has a known size, every response a
/// client counted as a success brought exactly that many body bytes. A client that reported a short
/// or a long body (a truncated stream, a chunk counted twice) fails its row instead of reporting a
/// throughput for bytes that did not arrive.
enum BodyBytesCheck {
    /// Why `result` cannot be right for responses of `bodyBytes` bytes each, or `nil` when its bytes add
    /// up. A run with errors is judged failed for them; its bytes are not checked.
    static func problem(in result: ClientResult, bodyBytes: Int) -> String? {
        guard result.errors == 0 else { return nil }
        let (expected, overflow) = Int64(result.requests).multipliedReportingOverflow(by: Int64(bodyBytes))
        guard overflow || result.bytesReceived != expected else { return nil }
        return "\(result.bytesReceived) body bytes arrived in \(result.requests) responses of \(bodyBytes) bytes"
            + (overflow ? "" : " (\(expected) expected)")
    }
}
