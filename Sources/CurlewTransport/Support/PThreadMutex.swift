#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex in memory of its own: what ``Locked`` and the other small lock-guarded objects
/// take their lock from.
///
/// It costs one allocation, where `NSLock` costs two and an Objective-C-style object; like `NSLock`
/// (and unlike `Synchronization.Mutex`, whose futex ThreadSanitizer does not see) it is a pthread
/// mutex, so ThreadSanitizer checks the state it guards. The owner calls ``deallocate()`` once, in
/// its `deinit`, when no thread can hold it any more.
///
/// Safety: `@unchecked Sendable` because the mutex is made for use from several threads; the
/// pointer itself never changes.
package struct PThreadMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Makes an unlocked mutex.
    package init() {
        self.mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        self.mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(self.mutex, nil)
    }

    /// Runs `body` with the mutex held. `body` must not take it again.
    @inline(__always)
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(self.mutex)
        defer { pthread_mutex_unlock(self.mutex) }
        return try body()
    }

    /// Destroys the mutex; call once, from the owner's `deinit`.
    package func deallocate() {
        pthread_mutex_destroy(self.mutex)
        self.mutex.deinitialize(count: 1)
        self.mutex.deallocate()
    }
}
