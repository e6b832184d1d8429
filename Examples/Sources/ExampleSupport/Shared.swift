import Foundation

/// A value several threads read and write: the examples' callbacks run on network contexts,
/// processing queues, completion queues and pool threads, and report back through these.
///
/// Safety: `@unchecked Sendable` because `storage` is read and written only while `lock` is held.
public final class Shared<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value

    /// Creates a box holding `value`.
    public init(_ value: Value) {
        self.storage = value
    }

    /// A copy of the current value.
    public var value: Value {
        self.withLock { $0 }
    }

    /// Replaces the value.
    public func set(_ value: Value) {
        self.withLock { $0 = value }
    }

    /// Reads or changes the value under the lock; `body` must not use this box again.
    @discardableResult
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        self.lock.lock()
        defer { self.lock.unlock() }
        return try body(&self.storage)
    }
}
