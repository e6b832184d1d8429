import Foundation

/// A request body the test sends in pieces and ends when it says: a request that stays in flight
/// until ``release()``, whatever the machine's speed. The first kilobyte is ready at once.
public struct HeldBody: Sendable {
    /// The body's chunks, for a streamed request body.
    public let chunks: AsyncStream<Data>
    /// Where the chunks come from.
    public let continuation: AsyncStream<Data>.Continuation

    /// A body whose first kilobyte is ready.
    public init() {
        (self.chunks, self.continuation) = AsyncStream<Data>.makeStream()
        self.continuation.yield(Data(repeating: 0x61, count: 1024))
    }

    /// Sends the rest and ends the body.
    public func release() {
        self.continuation.yield(Data(repeating: 0x62, count: 1024))
        self.continuation.finish()
    }
}
