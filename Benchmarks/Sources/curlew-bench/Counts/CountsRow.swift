/// One client's counts: each figure, or why it is missing.
struct CountsRow: Sendable, Codable {
    /// Instructions per request (callgrind's `Ir`): the two totals and their difference per request.
    struct Instructions: Sendable, Codable {
        var smallTotal: Int64
        var largeTotal: Int64
        /// (large − small) / (large count − small count).
        var perRequest: Double
    }

    var client: String
    var instructions: Instructions?
    var instructionsFailure: String?
    /// System calls per request, by name.
    var syscalls: [String: Double]?
    var syscallsFailure: String?

    init(client: String) {
        self.client = client
    }

    /// All system calls per request.
    var syscallTotal: Double? { self.syscalls.map { $0.values.reduce(0, +) } }
}
