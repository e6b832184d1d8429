import CurlewTransport
import Dispatch

extension TransferScheduler {
    /// Runs `body` on the scheduler's context (through ``TransferScheduler/perform(_:)``) and waits
    /// for its result, so a test can call the context-only requirements and read what they return.
    ///
    /// ```swift
    /// let diagnostics = scheduler.runOnContext { scheduler.diagnostics }
    /// #expect(diagnostics?.watchedSockets == 0)
    /// ```
    ///
    /// - Parameters:
    ///   - timeout: How long to wait for the context to run `body` (a stopped context never does).
    ///   - body: The work; it runs on the context, after everything submitted before it.
    /// - Returns: What `body` returned, or `nil` if it had not run within `timeout`.
    /// - Precondition: Not called on the context itself (the wait would block the very context).
    public func runOnContext<Result: Sendable>(
        timeout: Duration = defaultTestTimeout,
        _ body: @escaping @Sendable () -> Result
    ) -> Result? {
        precondition(!self.isOnContext, "runOnContext(_:) would wait for its own context")
        let result = Locked<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        self.perform {
            let value = body()
            result.set(value)
            done.signal()
        }
        guard done.wait(timeout: dispatchDeadline(after: timeout)) == .success else { return nil }
        return result.value
    }

    /// Calls ``TransferScheduler/shutdown(_:)`` on the context and waits for its completion.
    ///
    /// - Returns: Whether the completion was called within `timeout`.
    @discardableResult
    public func shutdownAndWait(timeout: Duration = defaultTestTimeout) -> Bool {
        let completed = DispatchSemaphore(value: 0)
        self.perform {
            self.shutdown { completed.signal() }
        }
        return completed.wait(timeout: dispatchDeadline(after: timeout)) == .success
    }
}

/// `timeout` from now, as a `DispatchTime` for semaphore waits.
private func dispatchDeadline(after timeout: Duration) -> DispatchTime {
    let (seconds, attoseconds) = timeout.components
    let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !nanoseconds.overflow else { return .distantFuture }
    return .now() + .nanoseconds(Int(nanoseconds.partialValue + attoseconds / 1_000_000_000))
}
