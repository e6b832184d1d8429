/// A setup failure: bad arguments, an unknown client name, a client that cannot be built. The client
/// prints the message on stderr and exits non-zero; it prints no result.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for stderr.
    public var message: String

    /// Creates an error with `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { self.message }
}
