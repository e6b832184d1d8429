import Dispatch

/// A dispatch queue that knows when code runs on it (through a queue-specific key), so a test can
/// check where a callback ran.
///
/// ```swift
/// let completion = MarkedQueue("tests.completion")
/// operation.completionQueue = completion.queue
/// operation.setCompletionHandlers(success: { _, _ in ranThere.set(completion.isCurrent) }, failure: nil)
/// ```
public final class MarkedQueue: Sendable {
    /// The queue.
    public let queue: DispatchQueue
    private let key = DispatchSpecificKey<UInt8>()

    /// Creates a serial queue (or a concurrent one) labelled `label`.
    public init(_ label: String, concurrent: Bool = false) {
        self.queue = DispatchQueue(label: label, attributes: concurrent ? .concurrent : [])
        self.queue.setSpecific(key: self.key, value: 1)
    }

    /// Whether the caller runs on this queue (or on a queue targeting it).
    public var isCurrent: Bool { DispatchQueue.getSpecific(key: self.key) != nil }
}
