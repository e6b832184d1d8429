/// The order runs happen in.
enum RunPlan {
    /// Every run of `repeats` passes, each a full pass over every cell and client, so the repeats of one
    /// client are never back to back (slow drifts of the machine then spread over all clients instead of
    /// landing on one). Within a pass the client order rotates by one per repeat, so no client is always
    /// the first after a change of scenario.
    static func make(scenarios: [MatrixScenario], clients: [BenchClient], repeats: Int) -> [PlannedRun] {
        var runs: [PlannedRun] = []
        for repeatNumber in 1...max(1, repeats) {
            for scenario in scenarios {
                let taking = clients.filter(scenario.admits)
                guard !taking.isEmpty else { continue }
                let shift = (repeatNumber - 1) % taking.count
                let rotated = Array(taking[shift...] + taking[..<shift])
                for concurrency in scenario.concurrencies {
                    for client in rotated {
                        runs.append(PlannedRun(
                            index: runs.count, repeatNumber: repeatNumber, scenario: scenario,
                            concurrency: concurrency, client: client
                        ))
                    }
                }
            }
        }
        return runs
    }
}
