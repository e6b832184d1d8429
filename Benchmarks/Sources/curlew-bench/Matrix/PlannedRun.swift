/// One client process to run: a client in a cell, in one repeat.
struct PlannedRun: Sendable, Hashable {
    /// Position in the run order, from 0.
    var index: Int
    /// Which repeat (pass over the matrix), from 1.
    var repeatNumber: Int
    /// What is measured.
    var scenario: MatrixScenario
    /// Transfers in flight.
    var concurrency: Int
    /// Who is measured.
    var client: BenchClient

    /// The cell this run belongs to.
    var cell: Cell { Cell(scenario: self.scenario.id, concurrency: self.concurrency) }
}
