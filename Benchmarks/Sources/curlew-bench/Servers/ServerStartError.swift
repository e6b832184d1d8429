/// A server the runner could not start, with what it said.
struct ServerStartError: Error, CustomStringConvertible {
    /// What went wrong, for people.
    var description: String
}
