import ArgumentParser
import Foundation

/// `curlew-bench counts`: instructions and system calls per request — the figures that repeat from run
/// to run on a shared machine, where wall-clock ratios swing by 10–30 %.
///
/// Each client runs small GETs with 16 in flight twice, for a small and a large request count after the
/// same warm-up, once under `valgrind --tool=callgrind` and once under `strace -f -c`; the difference of
/// the two totals divided by the difference of the counts is the cost of one request in steady state
/// (start-up, warm-up and teardown cancel out). Valgrind runs a copy of each binary without its debug
/// information (valgrind 3.19 rejects some of Swift's DWARF); symbols stay, so the self-cost table of one
/// Curlew path names functions.
struct CountsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "counts",
        abstract: "Instructions (callgrind) and system calls (strace) per request, differenced over two request counts.",
        discussion: "Needs valgrind and strace (Scripts/bench.sh counts installs them). Writes counts.md and counts.json."
    )

    @Option(help: ArgumentHelp("Comma-separated clients (default: curl-c, the engine through a delegate on each backend and through its async API on two, RequestOperation on each backend, the manager's async path over the engine on three, AsyncHTTPClient, Go).", valueName: "names"))
    var clients: String?

    @Option(help: "The smaller measured request count.")
    var small = 2_000

    @Option(help: "The larger measured request count.")
    var large = 10_000

    @Option(help: "Warm-up requests before each measured phase.")
    var warmup = 500

    @Option(help: "Transfers in flight.")
    var concurrency = 16

    @Option(help: ArgumentHelp("The client whose top self costs are listed.", valueName: "name"))
    var profile = "curlew-dispatch-engine"

    @Option(help: "Skip the callgrind or the strace half.")
    var only: Half?

    /// Which server.
    @OptionGroup(title: "Server") var server: ServerOptions
    /// Where the files go.
    @OptionGroup(title: "Output") var output: OutputOptions

    enum Half: String, ExpressibleByArgument {
        case instructions, syscalls
    }

    static let defaultClients = [
        "curl-c", "curlew-dispatch-engine", "curlew-dispatch-epoll-engine", "curlew-runloop-epoll-engine",
        "curlew-runloop-engine", "curlew-dispatch-epoll-engine-async", "curlew-runloop-epoll-engine-async",
        "curlew-dispatch", "curlew-dispatch-epoll", "curlew-runloop-epoll", "curlew-runloop",
        "curlew-dispatch-manager", "curlew-dispatch-epoll-manager", "curlew-runloop-epoll-manager", "async-http-client",
        "go-net-http",
    ]

    func validate() throws {
        guard self.small > 0, self.large > self.small else { throw ValidationError("--large must exceed --small > 0") }
        for name in self.clientNames where !BenchClient.all.contains(where: { $0.name == name }) {
            throw ValidationError("unknown client '\(name)'")
        }
    }

    var clientNames: [String] {
        self.clients.map { $0.split(separator: ",").map { String($0).trimmingWhitespace() } } ?? Self.defaultClients
    }

    func run() throws {
        let tools = CountingTools.locate()
        if self.only != .syscalls, tools.valgrind == nil { throw ValidationError("valgrind is not installed (apt-get install valgrind)") }
        if self.only != .instructions, tools.strace == nil { throw ValidationError("strace is not installed (apt-get install strace)") }
        let started = Date()
        let folder = self.output.folder(startedAt: started)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let interruptSources = InterruptHandler.install()
        defer { withExtendedLifetime(interruptSources) {} }
        DescriptorLimit.raiseToHardLimit()
        let environment = MachineEnvironment.collect(commandLine: (["curlew-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " "))

        let servers = try ServerSet(scenarios: [.getSmall], choice: self.server.server, external: self.server.external,
                                    delayMilliseconds: { _ in 0 })
        defer { servers.stop() }
        guard let assignment = servers.assignments[MatrixScenario.getSmall.id] else {
            throw ValidationError("no server for small GETs: \(servers.unavailable[MatrixScenario.getSmall.id] ?? "?")")
        }
        let scratch = try ScratchFolder.make(prefix: "curlew-counts")
        defer { ScratchFolder.remove(scratch) }
        let counter = RequestCounter(tools: tools, url: assignment.url, concurrency: self.concurrency, warmup: self.warmup,
                                     scratch: scratch, logFolder: folder)
        var rows: [CountsRow] = []
        for name in self.clientNames {
            guard let client = BenchClient.all.first(where: { $0.name == name }), !client.isWrk else { continue }
            Console.log("curlew-bench counts: \(name)")
            var row = CountsRow(client: name)
            if self.only != .syscalls {
                switch counter.instructionsPerRequest(client, small: self.small, large: self.large, annotate: name == self.profile) {
                case .success(let figure): row.instructions = figure
                case .failure(let failure): row.instructionsFailure = failure.reason
                }
            }
            if self.only != .instructions {
                switch counter.syscallsPerRequest(client, small: self.small, large: self.large) {
                case .success(let byName): row.syscalls = byName
                case .failure(let failure): row.syscallsFailure = failure.reason
                }
            }
            rows.append(row)
        }
        let report = CountsReport(environment: environment, server: assignment.endpoint.label, url: assignment.url,
                                  small: self.small, large: self.large, warmup: self.warmup, concurrency: self.concurrency,
                                  rows: rows, profile: counter.profile.map { (self.profile, $0) })
        let markdown = report.markdown()
        try markdown.write(toFile: folder + "/counts.md", atomically: true, encoding: .utf8)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(report).write(to: URL(fileURLWithPath: folder + "/counts.json"))
        Console.writeOutput(markdown)
        Console.log("curlew-bench counts: wrote counts.md and counts.json to \(folder)")
    }
}
