import Foundation

/// What `counts` writes: per client, instructions and system calls per request, ratios to `curl-c`,
/// and the top self costs of one Curlew path.
struct CountsReport: Sendable, Encodable {
    var environment: MachineEnvironment
    var server: String
    var url: String
    var small: Int
    var large: Int
    var warmup: Int
    var concurrency: Int
    var rows: [CountsRow]
    /// The profiled client and its top functions by self cost per request.
    var profileClient: String?
    var profile: [CallgrindOutput.Function]?

    init(environment: MachineEnvironment, server: String, url: String, small: Int, large: Int, warmup: Int,
         concurrency: Int, rows: [CountsRow], profile: (String, [CallgrindOutput.Function])?) {
        self.environment = environment
        self.server = server
        self.url = url
        self.small = small
        self.large = large
        self.warmup = warmup
        self.concurrency = concurrency
        self.rows = rows
        self.profileClient = profile?.0
        self.profile = profile?.1
    }

    func markdown() -> String {
        let baseline = self.rows.first { $0.client == BenchClient.curlC }
        var out = "# Curlew counts\n\n"
        out += "- **Machine:** \(self.environment.machineLine) · \(self.environment.swift ?? "") · \(self.environment.libcurl ?? "") · \(self.environment.build) build\n"
        out += "- **Server:** \(self.server) · `\(self.url)`\n"
        out += "- **Method:** small GETs, \(self.concurrency) in flight, \(self.warmup) warm-up requests, then "
        out += "\(self.small) and \(self.large) measured ones, each count once under `valgrind --tool=callgrind` "
        out += "(instructions) and once under `strace -f -c` (system calls); per request = (large − small) / "
        out += "\(self.large - self.small). Counts move by a few percent between runs, more on a loaded machine (how many events one wake-up handles changes the work per request): compare rows of one run.\n\n"
        out += "| client | instructions/request | × curl-c | syscalls/request | × curl-c | most frequent syscalls per request |\n"
        out += "| --- | ---: | ---: | ---: | ---: | --- |\n"
        for row in self.rows {
            let instructions = row.instructions.map { Self.thousands($0.perRequest) } ?? "— (\(row.instructionsFailure ?? "not measured"))"
            let instructionRatio = Self.ratio(row.instructions?.perRequest, baseline?.instructions?.perRequest)
            let syscalls = row.syscallTotal.map { String(format: "%.1f", $0) } ?? "— (\(row.syscallsFailure ?? "not measured"))"
            let syscallRatio = Self.ratio(row.syscallTotal, baseline?.syscallTotal)
            let top = (row.syscalls ?? [:]).sorted { $0.value > $1.value }.prefix(5)
                .map { "\($0.key) \(String(format: "%.1f", $0.value))" }.joined(separator: ", ")
            out += "| \(row.client) | \(instructions) | \(instructionRatio) | \(syscalls) | \(syscallRatio) | \(top) |\n"
        }
        out += "\n" + self.rows.map { row in
            "- **\(row.client)**: " + (BenchClient.all.first { $0.name == row.client }?.summary ?? "") + "\n"
        }.joined()
        if let client = self.profileClient, let profile = self.profile,
           let total = self.rows.first(where: { $0.client == client })?.instructions?.perRequest, total > 0 {
            out += "\n## Where \(client) spends its instructions\n\n"
            out += "Top self costs per request (`callgrind_annotate --inclusive=no` of both runs, differenced like the totals):\n\n"
            out += "| share | instructions/request | function |\n| ---: | ---: | --- |\n"
            for function in profile {
                let share = Double(function.instructions) / total * 100
                out += "| \(String(format: "%.1f", share)) % | \(Self.thousands(Double(function.instructions))) | `\(function.name.prefix(140))` |\n"
            }
        }
        return out
    }

    /// `125.3k` for 125,300.
    static func thousands(_ value: Double) -> String {
        value >= 1_000_000 ? String(format: "%.1fM", value / 1_000_000)
            : value >= 1_000 ? String(format: "%.1fk", value / 1_000) : String(format: "%.1f", value)
    }

    static func ratio(_ value: Double?, _ baseline: Double?) -> String {
        guard let value, let baseline, baseline > 0 else { return "—" }
        return String(format: "%.2f", value / baseline)
    }
}
