/// Parses `wrk --latency`'s text output. Never traps: output it does not understand is a reason.
///
/// The lines it reads:
/// ```
///     Latency   150.00us   50.00us   2.00ms   90.00%
///      50%  148.00us
///      90%  180.00us
///   492500 requests in 5.00s, 120.00MB read
///   Socket errors: connect 0, read 0, write 0, timeout 0
///   Non-2xx or 3xx responses: 5
/// Requests/sec:  98500.00
/// ```
enum WrkOutputParser {
    /// The report in `text`, or why there is none.
    static func parse(_ text: String) -> Result<WrkReport, ClientOutputParser.ParseFailure> {
        var requests: Int?
        var seconds: Double?
        var bytesRead = 0.0
        var percentiles: [String: Double] = [:]
        var maximum = 0.0
        var errors = 0
        var requestsPerSecond: Double?

        for rawLine in text.split(separator: "\n") {
            let words = rawLine.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
            guard let first = words.first else { continue }
            if first == "Latency", words.count >= 4, let value = self.microseconds(words[3]) {
                maximum = value
            } else if words.count == 2, first.hasSuffix("%"), let value = self.microseconds(words[1]) {
                percentiles[first] = value
            } else if words.count >= 6, words[1] == "requests", words[2] == "in" {
                requests = Int(first)
                seconds = self.microseconds(words[3]).map { $0 / 1_000_000 }
                bytesRead = self.bytes(words[4]) ?? 0
            } else if first == "Socket", words.count >= 2, words[1] == "errors:" {
                // connect N read N write N timeout N
                errors += stride(from: 3, to: words.count, by: 2).compactMap { Int(words[$0]) }.reduce(0, +)
            } else if first == "Non-2xx", let count = words.last.flatMap({ Int($0) }) {
                errors += count
            } else if first == "Requests/sec:", words.count >= 2 {
                requestsPerSecond = Double(words[1])
            }
        }
        guard let requests, let seconds, seconds > 0, let requestsPerSecond else {
            let excerpt = text.split(separator: "\n").prefix(3).joined(separator: " | ")
            return .failure(.init(reason: "unreadable wrk output: \(excerpt.prefix(160))"))
        }
        guard let p50 = percentiles["50%"], let p90 = percentiles["90%"], let p99 = percentiles["99%"] else {
            return .failure(.init(reason: "wrk printed no latency distribution (needs --latency)"))
        }
        return .success(WrkReport(
            requests: requests, seconds: seconds, bytesRead: bytesRead, p50: p50, p75: percentiles["75%"] ?? 0,
            p90: p90, p99: p99, max: maximum, errors: errors, requestsPerSecond: requestsPerSecond
        ))
    }

    /// `150.00us`, `2.00ms`, `1.50s`, `1.00m`, `1.00h` → microseconds.
    static func microseconds(_ word: String) -> Double? {
        let units: [(String, Double)] = [("us", 1), ("ms", 1_000), ("s", 1_000_000), ("m", 60_000_000), ("h", 3_600_000_000)]
        for (suffix, scale) in units where word.hasSuffix(suffix) {
            guard let number = Double(word.dropLast(suffix.count)), number.isFinite, number >= 0 else { return nil }
            return number * scale
        }
        return nil
    }

    /// `120.00MB`, `512.00B`, `1.20GB` → bytes (wrk's units are powers of 1,024).
    static func bytes(_ word: String) -> Double? {
        let units: [(String, Double)] = [("TB", 1_099_511_627_776), ("GB", 1_073_741_824), ("MB", 1_048_576), ("KB", 1_024), ("B", 1)]
        for (suffix, scale) in units where word.hasSuffix(suffix) {
            guard let number = Double(word.dropLast(suffix.count)), number.isFinite, number >= 0 else { return nil }
            return number * scale
        }
        return nil
    }
}
