import Dispatch
import Foundation

/// Waits, in the examples' own threads (never in Swift's cooperative pool: the examples are plain
/// programs whose main thread is theirs to block).
public enum Waiting {
    /// Polls `condition` every millisecond until it holds or `timeout` passes.
    ///
    /// - Returns: Whether `condition` held.
    @discardableResult
    public static func until(timeout: Duration = .seconds(30), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            usleep(1_000)
        }
        return true
    }

    /// Whether `condition` held throughout `duration` (checked every millisecond). Use it only for
    /// something that cannot happen while the example holds it back, so the answer is not a race.
    public static func holds(throughout duration: Duration, _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if !condition() { return false }
            usleep(1_000)
        }
        return condition()
    }

    /// Blocks until `semaphore` is signalled or `timeout` passes.
    ///
    /// - Returns: Whether it was signalled.
    public static func wait(for semaphore: DispatchSemaphore, timeout: Duration = .seconds(30)) -> Bool {
        semaphore.wait(timeout: .now() + Self.dispatchInterval(timeout)) == .success
    }

    /// `duration` as a `DispatchTimeInterval`, in nanoseconds.
    public static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    /// Milliseconds, with two decimals: `12.34 ms`.
    public static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let value = Double(seconds) * 1_000 + Double(attoseconds) / 1e15
        return String(format: "%.2f ms", value)
    }
}
