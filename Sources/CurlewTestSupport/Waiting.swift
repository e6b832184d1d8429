import CurlewTransport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Waiting in tests means polling a condition against a generous deadline: a correct program passes
// as soon as the condition holds, however slow the machine, and a sleep is never the thing that
// synchronizes. The timeouts only bound how long a broken program takes to fail.
//
// Tests wait by *suspending*. Swift Testing runs every test, synchronous ones included, on the
// cooperative pool, which has one thread per core; a test that blocks one of them holds back every
// other test (and, on Linux, the dispatch work that shares the pool). The blocking variant is for
// code that runs on a thread of its own — a `Thread`, a dispatch block, an exit test's child
// process — and the compiler refuses it in `async` code.

/// How long the waiting helpers poll by default: far longer than anything should take.
public let defaultTestTimeout: Duration = .seconds(30)

/// The pause between two polls; short, so a passing wait returns promptly.
private let pollInterval: Duration = .milliseconds(1)

/// Polls `condition` until it returns `true` or `timeout` passes, suspending between polls.
///
/// ```swift
/// #expect(await waitUntil { probe.eventCount(for: fd) > 0 })
/// ```
///
/// - Parameters:
///   - timeout: How long to keep polling before giving up.
///   - condition: Evaluated first at once, then after each short pause.
/// - Returns: `true` as soon as `condition` holds; `false` if it still did not after `timeout`, or
///   if the task was cancelled first.
@discardableResult
public func waitUntil(
    timeout: Duration = defaultTestTimeout,
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline || Task.isCancelled { return false }
        try? await Task.sleep(for: pollInterval)
    }
}

/// A bounded negative check: whether `condition` holds at every poll during `window`, suspending
/// between polls.
///
/// Use it to show that something does *not* happen (no event after a disarm, no timer fire after
/// `.disarm`). It can only fail when the thing happens; a slow machine makes it pass, never fail.
///
/// ```swift
/// #expect(await holdsThroughout(.milliseconds(200)) { probe.eventCount(for: fd) == before })
/// ```
///
/// - Returns: `false` at the first poll where `condition` is false; `true` after `window`.
public func holdsThroughout(_ window: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: window)
    while true {
        guard try await condition() else { return false }
        if ContinuousClock.now >= deadline { return true }
        try? await Task.sleep(for: pollInterval)
    }
}

/// Polls `condition` until it returns `true` or `timeout` passes, **blocking** the calling thread.
///
/// Only for code that is not `async` and runs on a thread of its own (a `Thread`'s body, a dispatch
/// block, an exit test's child process); tests wait with ``waitUntil(timeout:_:)``.
///
/// - Returns: `true` as soon as `condition` holds; `false` if it still did not after `timeout`.
@available(*, noasync, message: "suspend with `await waitUntil` instead: a blocked cooperative thread stalls other tests")
@discardableResult
public func blockingWaitUntil(timeout: Duration = defaultTestTimeout, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        let (seconds, attoseconds) = pollInterval.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1, errno == EINTR {
            request = remaining
        }
    }
}

/// Starts work that reports one value through a callback, and suspends until it does or `timeout`
/// passes, whichever comes first; a late report is dropped.
///
/// ```swift
/// let done = await awaitCallback(timeout: .seconds(10)) { report in scheduler.shutdown { report(true) } }
/// ```
///
/// - Returns: The reported value, or `nil` after `timeout`.
public func awaitCallback<Value: Sendable>(
    timeout: Duration = defaultTestTimeout,
    _ start: (@escaping @Sendable (Value) -> Void) -> Void
) async -> Value? {
    let slot = Locked<CheckedContinuation<Value?, Never>?>(nil)
    let resume: @Sendable (Value?) -> Void = { value in
        slot.withLock { continuation in
            continuation?.resume(returning: value)
            continuation = nil
        }
    }
    return await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
        slot.set(continuation)
        let timer = Task {
            try? await Task.sleep(for: timeout)
            resume(nil)
        }
        start { value in
            resume(value)
            timer.cancel()
        }
    }
}

/// Runs blocking work — raw socket I/O, a synchronous shutdown, a wait on a semaphore — on a
/// thread of its own and suspends until it returns, so the cooperative pool is never blocked.
///
/// ```swift
/// let response = try await onThreadOfItsOwn { try connection.send("GET / HTTP/1.1\r\n\r\n") }
/// ```
public func onThreadOfItsOwn<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "curlew.test.blocking"
        thread.start()
    }
}

/// What a bounded wait throws when its time is up.
public struct TimedOut: Error, CustomStringConvertible, Sendable {
    /// How long the wait lasted.
    public var timeout: Duration

    public var description: String { "no result within \(self.timeout)" }
}

/// Awaits `body` for at most `timeout`, so a broken library fails the test instead of hanging it.
///
/// `body` runs in a task of its own that is *not* cancelled when the time is up: the test gets
/// ``TimedOut`` and the task is left behind. Cancelling it could turn the failure into a pass —
/// `RequestOperation.responseObject()`, for one, cancels its operation when its task is cancelled,
/// and a test that expects a cancellation error would then see exactly that.
///
/// ```swift
/// let object = try await bounded { try await operation.responseObject() }
/// ```
///
/// - Returns: What `body` returned.
/// - Throws: What `body` threw, or ``TimedOut``.
public func bounded<Value: Sendable>(
    by timeout: Duration = defaultTestTimeout,
    _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let outcome: Result<Value, any Error>? = await awaitCallback(timeout: timeout) { report in
        Task {
            do {
                report(.success(try await body()))
            } catch {
                report(.failure(error))
            }
        }
    }
    guard let outcome else { throw TimedOut(timeout: timeout) }
    return try outcome.get()
}
