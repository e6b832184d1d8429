import OpenAPIRuntime

/// How an operation's request body is sent: read into memory first when its length is known and
/// small (so that a retry can send it again), streamed as it is produced otherwise.
enum RequestBodyPlan: Hashable {
    /// Read all of the body — exactly `length` bytes — then send it from memory.
    case collect(length: Int64)
    /// Send the chunks as the body yields them, announcing `length` when it is known (chunked on
    /// HTTP/1.1 otherwise).
    case stream(length: Int64?)

    /// The plan for a body of `length`, collecting known lengths up to `limit`.
    init(length: HTTPBody.Length, collectingUpTo limit: Int64) {
        switch length {
        case .known(let count) where count >= 0 && count <= limit:
            self = .collect(length: count)
        case .known(let count):
            self = .stream(length: count >= 0 ? count : nil)
        case .unknown:
            self = .stream(length: nil)
        }
    }
}
