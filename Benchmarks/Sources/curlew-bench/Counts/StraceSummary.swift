/// The table `strace -f -c` prints: calls per system call.
///
/// ```
/// % time     seconds  usecs/call     calls    errors syscall
/// ------ ----------- ----------- --------- --------- ----------------
///  45.00    0.010000          10      1000           epoll_wait
///  20.00    0.004000           4      1000       100 recvfrom
/// ------ ----------- ----------- --------- --------- ----------------
/// 100.00    0.022222                  3000       100 total
/// ```
struct StraceSummary: Sendable, Hashable, Codable {
    /// Calls by system call name.
    var calls: [String: Int]

    /// All calls.
    var total: Int { self.calls.values.reduce(0, +) }

    /// Parses the table; `nil` when `text` holds none.
    init?(_ text: String) {
        var calls: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            // % time, seconds, usecs/call, calls, [errors], syscall: the name is last, the calls fourth.
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, let name = fields.last, name != "total", Double(fields[0]) != nil,
                  let count = Int(fields[3]) else { continue }
            calls[String(name), default: 0] += count
        }
        guard !calls.isEmpty else { return nil }
        self.calls = calls
    }

    init(calls: [String: Int]) {
        self.calls = calls
    }
}
