import Foundation

/// A value shared between a test and the code it drives (handlers, hooks on a scheduler's context),
/// guarded by a lock. A class, so closures can capture it.
///
/// ```swift
/// let order = LockedValue<[Int]>([])
/// scheduler.perform { order.withLock { $0.append(1) } }
/// ```
///
/// The lock is an `NSLock` (a pthread mutex), not `Synchronization.Mutex`: on Linux with Swift 6.3.1
/// ThreadSanitizer does not see `Mutex`'s futex-based locking and reports races on every contended
/// access, which would drown real reports in `swift test --sanitize=thread`.
public final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `storage` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var storage: Value

    public init(_ value: Value) {
        self.storage = value
    }

    /// A copy of the current value.
    public var value: Value {
        self.lock.withLock { self.storage }
    }

    /// Replaces the value.
    public func set(_ value: Value) {
        self.lock.withLock { self.storage = value }
    }

    /// Reads or changes the value under the lock. Do not call back into code that takes it.
    @discardableResult
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try self.lock.withLock { try body(&self.storage) }
    }
}
