/// Runs the planned runs one after another, each client in a process of its own, against the server
/// assigned to its scenario.
struct MatrixRunner {
    /// Runs the client binaries.
    var clients: ClientExecutor
    /// Runs wrk.
    var wrk: WrkExecutor
    /// Where each scenario's clients go.
    var servers: ServerSet

    /// Every run's record, in run order.
    func run(_ plan: [PlannedRun], progress: ProgressReporter) -> [RunRecord] {
        var records: [RunRecord] = []
        for run in plan {
            progress.willStart(run)
            let record: RunRecord
            if let assignment = self.servers.assignments[run.scenario.id] {
                record = run.client.isWrk
                    ? self.wrk.execute(run, assignment: assignment)
                    : self.clients.execute(run, assignment: assignment)
            } else {
                record = RunRecord(
                    scenario: run.scenario.id, concurrency: run.concurrency, client: run.client.name,
                    repeatNumber: run.repeatNumber, status: .unsupported,
                    reason: self.servers.unavailable[run.scenario.id] ?? "no server", url: "", server: "",
                    result: nil, unavailable: [], processUsage: .zero, termination: "not started", wallSeconds: 0,
                    commandLine: []
                )
            }
            records.append(record)
            progress.didFinish(run, record: record)
        }
        return records
    }
}
