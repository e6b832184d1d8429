/// One cell of the matrix: a scenario at one concurrency.
struct Cell: Sendable, Hashable, Codable, Comparable {
    /// ``MatrixScenario/id``.
    var scenario: String
    /// Transfers in flight.
    var concurrency: Int

    /// By scenario ID, then concurrency.
    static func < (lhs: Cell, rhs: Cell) -> Bool {
        (lhs.scenario, lhs.concurrency) < (rhs.scenario, rhs.concurrency)
    }
}
