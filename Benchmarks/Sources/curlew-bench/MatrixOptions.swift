import ArgumentParser

/// What to run: the scenarios, clients, concurrencies and repeats.
struct MatrixOptions: ParsableArguments {
    @Flag(help: "A reduced matrix that runs in under two minutes: small GET, POST, HTTP/2 and lateness at concurrency 16, 64 MiB streamed bodies, a short idle, one pass, one-second runs.")
    var quick = false

    @Option(help: "Passes over the whole matrix (default: 3, or 1 with --quick). Repeats of one client are never back to back.")
    var repeats: Int?

    @Option(help: ArgumentHelp("Comma-separated clients to run (default: all).", valueName: "names"))
    var clients: String?

    @Option(help: ArgumentHelp("Comma-separated scenarios to run (default: all, or the quick set).", valueName: "ids"))
    var scenarios: String?

    @Option(help: ArgumentHelp("Comma-separated concurrencies for the scenarios that sweep it (get-small, get-small-queued, h2).", valueName: "list"))
    var concurrency: String?

    @Flag(help: "Print the scenarios and clients and exit.")
    var list = false

    @Flag(help: "Print the plan and its estimated duration, start nothing.")
    var dryRun = false

    /// Passes to run.
    var effectiveRepeats: Int { self.repeats ?? (self.quick ? 1 : 3) }

    /// Rejects values that make no sense before anything starts.
    func validate() throws {
        if let repeats, repeats < 1 { throw ValidationError("--repeats must be at least 1") }
        _ = try self.selectedScenarios()
        _ = try self.selectedClients()
    }

    /// The scenarios to run, in report order, with `--concurrency` applied.
    func selectedScenarios() throws -> [MatrixScenario] {
        var chosen = self.quick ? MatrixScenario.quick : MatrixScenario.all
        if let scenarios {
            let names = Self.list(scenarios)
            for name in names where !MatrixScenario.all.contains(where: { $0.id == name }) {
                throw ValidationError("unknown scenario '\(name)'; known: \(MatrixScenario.all.map(\.id).joined(separator: ", "))")
            }
            // Named scenarios come from the quick set when it has them (its reduced concurrencies), else the full one.
            chosen = MatrixScenario.all.filter { names.contains($0.id) }.map { scenario in
                (self.quick ? MatrixScenario.quick.first { $0.id == scenario.id } : nil) ?? scenario
            }
        }
        if let concurrency {
            let values = Self.list(concurrency).map { Int($0) }
            guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else {
                throw ValidationError("--concurrency takes positive numbers, e.g. 1,16,128")
            }
            let sweep = values.compactMap { $0 }
            chosen = chosen.map { scenario in
                MatrixScenario.all.first(where: { $0.id == scenario.id })?.sweepsConcurrency == true
                    ? scenario.with(concurrencies: sweep) : scenario
            }
        }
        return chosen
    }

    /// The clients to run, in report order.
    func selectedClients() throws -> [BenchClient] {
        guard let clients else { return BenchClient.all }
        let names = Self.list(clients)
        for name in names where !BenchClient.all.contains(where: { $0.name == name }) {
            throw ValidationError("unknown client '\(name)'; known: \(BenchClient.all.map(\.name).joined(separator: ", "))")
        }
        return BenchClient.all.filter { names.contains($0.name) }
    }

    private static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
    }
}
