import Foundation

/// A value guarded by a lock, for state shared across threads outside the engine's context (and by
/// the tests, which share state with the code they drive).
///
/// The lock is a pthread mutex (``PThreadMutex``) rather than `Synchronization.Mutex`: on Linux,
/// ThreadSanitizer does not see `Mutex`'s futex-based locking and reports every contended access
/// as a race, which would hide real reports in `swift test --sanitize=thread`.
///
/// Safety: `@unchecked Sendable` because `storage` is read and written only while `lock` is held.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = PThreadMutex()
    /// Accessed only with `lock` held, which already excludes overlapping access: Swift's dynamic
    /// exclusivity check would only repeat it, at a cost on every operation.
    @exclusivity(unchecked) private var storage: Value

    package init(_ value: Value) {
        self.storage = value
    }

    deinit {
        self.lock.deallocate()
    }

    /// A copy of the current value.
    package var value: Value {
        self.withLock { $0 }
    }

    /// Replaces the value.
    package func set(_ value: Value) {
        self.withLock { $0 = value }
    }

    /// Reads or changes the value under the lock. `body` must not take the lock again.
    @discardableResult
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try self.lock.withLock { try body(&self.storage) }
    }
}
