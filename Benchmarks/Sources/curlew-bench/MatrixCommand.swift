import ArgumentParser
import Foundation

/// `curlew-bench matrix` (the default): Curlew's two scheduler backends against URLSession,
/// AsyncHTTPClient, Go's net/http, a C curl loop, wrk and the two designs the AFNetworking articles
/// reject, in one run, each client in its own process, against a server the runner starts (nginx, else
/// the embedded `CurlewTestServer`).
struct MatrixCommand: ParsableCommand {
    /// The command's name, abstract and discussion for `--help`.
    static let configuration = CommandConfiguration(
        commandName: "matrix",
        abstract: "Benchmarks Curlew's backends against its peers and the server's ceiling (the default).",
        discussion: """
            Starts a server on 127.0.0.1 (nginx when installed, else CurlewTestServer; the embedded server \
            also serves the slow responses of the idle and thread-growth scenarios), runs every client in a \
            process of its own for every scenario and concurrency, repeats the whole pass, and prints a \
            Markdown table per scenario on stdout. Progress goes to stderr. results.md, results.csv, \
            runs.csv, results.json and SVG charts go to the output folder. Exits 1 when any row failed.

            Curlew's rows, per backend: curlew-<backend>-engine (TransferEngine through a delegate; \
            engine.stream in the stream scenario), curlew-<backend>-engine-async (try await engine.execute), \
            curlew-<backend>-manager (RequestOperationManager's async path straight over the engine: \
            response(for:as:), stream(for:) when streaming), curlew-<backend> (RequestOperation on an \
            OperationQueue). --list prints every client and scenario.
            """
    )

    /// What to run.
    @OptionGroup(title: "Matrix") var matrix: MatrixOptions
    /// How much each run does.
    @OptionGroup(title: "Size") var size: SizeOptions
    /// Which server.
    @OptionGroup(title: "Server") var server: ServerOptions
    /// Where the files go.
    @OptionGroup(title: "Output") var output: OutputOptions

    /// Starts the servers, runs the matrix, stops the servers, writes and prints the report.
    ///
    /// - Throws: ``ServerStartError`` when no server can be started, a file error when the report cannot be
    ///   written, and `ExitCode(1)` when any row failed.
    func run() throws {
        let scenarios = try self.matrix.selectedScenarios()
        let clients = try self.matrix.selectedClients()
        let repeats = self.matrix.effectiveRepeats
        let size = self.size.runSize(quick: self.matrix.quick)
        if self.matrix.list {
            Console.writeOutput(Self.catalog())
            return
        }
        if self.matrix.dryRun {
            let plan = RunPlan.make(scenarios: scenarios, clients: clients, repeats: repeats)
            Console.writeOutput(Self.describe(plan, size: size))
            return
        }

        let started = Date()
        let folder = self.output.folder(startedAt: started)
        let interruptSources = InterruptHandler.install()
        defer { withExtendedLifetime(interruptSources) {} }
        DescriptorLimit.raiseToHardLimit()
        let commandLine = (["curlew-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        Console.log("curlew-bench: collecting machine details; results go to \(folder)")
        let environment = MachineEnvironment.collect(commandLine: commandLine)

        let clock = ContinuousClock.now
        let servers = try ServerSet(
            scenarios: scenarios, choice: self.server.server, external: self.server.external,
            delayMilliseconds: size.delayMilliseconds(for:)
        )
        for (id, reason) in servers.unavailable.sorted(by: { $0.key < $1.key }) {
            Console.log("curlew-bench: scenario \(id) skipped: \(reason)")
        }
        let runnable = scenarios.filter { servers.assignments[$0.id] != nil }
        let plan = RunPlan.make(scenarios: runnable, clients: clients, repeats: repeats)
        Console.log("curlew-bench: \(plan.count) runs, about \(ProgressReporter.clock(ProgressReporter.expectedSeconds(of: plan, size: size)))")

        let scratch = try ScratchFolder.make(prefix: "curlew-bench")
        defer { ScratchFolder.remove(scratch) }
        let runner = MatrixRunner(
            clients: ClientExecutor(size: size, logFolder: folder + "/logs"),
            wrk: WrkExecutor(executable: ExecutableLookup.tool("wrk"), size: size, scratchFolder: scratch),
            servers: servers
        )
        let progress = ProgressReporter(runs: plan, size: size, repeats: repeats)
        let records = runner.run(plan, progress: progress)
        progress.finish()
        servers.stop()

        let report = BenchmarkReport(
            environment: environment, repeats: repeats, size: size,
            scenarios: scenarios.map { scenario in
                let assignment = servers.assignments[scenario.id]
                return .init(
                    id: scenario.id, title: scenario.title, summary: scenario.summary,
                    clientScenario: scenario.clientScenario, concurrencies: scenario.concurrencies,
                    headline: scenario.headline, server: assignment?.endpoint.label, url: assignment?.url,
                    skipped: servers.unavailable[scenario.id]
                )
            },
            clients: clients.map(\.name), runs: records,
            aggregates: Aggregator.aggregate(records, scenarios: scenarios, clients: clients),
            wallSeconds: (ContinuousClock.now - clock).seconds
        )
        let written = try ReportWriter(folder: folder).write(report, scenarios: scenarios)
        Console.writeOutput(written.markdown)
        Console.log("curlew-bench: wrote \(written.files.joined(separator: ", ")) to \(folder)")
        if report.hasFailures {
            let failed = report.aggregates.filter { $0.status == .failed }.map { "\($0.scenario) C=\($0.concurrency) \($0.client)" }
            Console.log("curlew-bench: \(failed.count) row(s) FAILED: \(failed.joined(separator: "; "))")
            throw ExitCode(1)
        }
    }

    /// `--list`.
    private static func catalog() -> String {
        var out = "Scenarios:\n"
        let width = MatrixScenario.all.map(\.id.count).max() ?? 0
        for scenario in MatrixScenario.all {
            out += "  \(scenario.id.padding(toLength: width, withPad: " ", startingAt: 0)) "
                + "C=\(scenario.concurrencies.map(String.init).joined(separator: ",")): \(scenario.summary)\n"
        }
        out += "  (--quick: " + MatrixScenario.quick.map { "\($0.id) C=\($0.concurrencies.map(String.init).joined(separator: ","))" }
            .joined(separator: ", ") + ")\nClients:\n"
        let nameWidth = BenchClient.all.map(\.name.count).max() ?? 0
        for client in BenchClient.all {
            out += "  \(client.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)) \(client.summary)"
                + " [\(client.product ?? "wrk on PATH")]\n"
        }
        return out
    }

    /// `--dry-run`.
    private static func describe(_ plan: [PlannedRun], size: RunSize) -> String {
        var out = plan.map { run in
            "pass \(run.repeatNumber) \(run.scenario.id) C=\(run.concurrency) \(run.client.name)"
        }.joined(separator: "\n")
        out += "\n\(plan.count) runs, about \(ProgressReporter.clock(ProgressReporter.expectedSeconds(of: plan, size: size)))\n"
        return out
    }
}
