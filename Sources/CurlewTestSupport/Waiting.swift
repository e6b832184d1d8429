#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Waiting in tests means polling a condition against a generous deadline: a correct program passes
// as soon as the condition holds, however slow the machine, and a sleep is never the thing that
// synchronizes. The timeouts only bound how long a broken program takes to fail.

/// How long the waiting helpers poll by default: far longer than anything should take.
public let defaultTestTimeout: Duration = .seconds(30)

/// The pause between two polls; short, so a passing wait returns promptly.
private let pollInterval: Duration = .milliseconds(1)

/// Polls `condition` until it returns `true` or `timeout` passes.
///
/// ```swift
/// #expect(waitUntil { probe.eventCount(for: fd) > 0 })
/// ```
///
/// - Parameters:
///   - timeout: How long to keep polling before giving up.
///   - condition: Evaluated on the calling thread, first at once, then after each short pause.
/// - Returns: `true` as soon as `condition` holds; `false` if it still did not after `timeout`.
///
/// In `async` code the suspending overload below is chosen instead (this one is disfavoured), so a
/// test never parks one of the few cooperative threads while it waits: on Linux that starves
/// dispatch queues as well.
@_disfavoredOverload
@discardableResult
public func waitUntil(timeout: Duration = defaultTestTimeout, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        pauseCallingThread(for: pollInterval)
    }
}

/// Polls `condition` until it returns `true` or `timeout` passes, suspending between polls.
///
/// In an `async` test this overload is the one chosen: write `await waitUntil { … }`.
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

/// A bounded negative check: whether `condition` holds at every poll during `window`.
///
/// Use it to show that something does *not* happen (no event after a disarm, no timer fire after
/// `.disarm`). It can only fail when the thing happens; a slow machine makes it pass, never fail.
///
/// ```swift
/// #expect(holdsThroughout(.milliseconds(200)) { probe.eventCount(for: fd) == before })
/// ```
///
/// - Returns: `false` at the first poll where `condition` is false; `true` after `window`.
public func holdsThroughout(_ window: Duration, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: window)
    while true {
        guard try condition() else { return false }
        if ContinuousClock.now >= deadline { return true }
        pauseCallingThread(for: pollInterval)
    }
}

/// Blocks the calling thread for `duration` (a pause between polls, never a synchronization).
private func pauseCallingThread(for duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1, errno == EINTR {
        request = remaining
    }
}
