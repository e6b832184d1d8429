import CurlewTransport

extension TransferScheduler {
    /// Runs `body` on the scheduler's context (through ``TransferScheduler/perform(_:)``) and
    /// suspends until it has run, so a test can call the context-only requirements and read what
    /// they return.
    ///
    /// ```swift
    /// let diagnostics = await scheduler.runOnContext { scheduler.diagnostics }
    /// #expect(diagnostics?.watchedSockets == 0)
    /// ```
    ///
    /// - Parameters:
    ///   - timeout: How long to wait for the context to run `body` (a stopped context never does).
    ///   - body: The work; it runs on the context, after everything submitted before it.
    /// - Returns: What `body` returned, or `nil` if it had not run within `timeout`.
    public func runOnContext<Result: Sendable>(
        timeout: Duration = defaultTestTimeout,
        _ body: @escaping @Sendable () -> Result
    ) async -> Result? {
        await awaitCallback(timeout: timeout) { report in
            self.perform { report(body()) }
        }
    }

    /// Calls ``TransferScheduler/shutdown(_:)`` on the context and suspends until its completion.
    ///
    /// - Returns: Whether the completion was called within `timeout`.
    @discardableResult
    public func shutdownAndWait(timeout: Duration = defaultTestTimeout) async -> Bool {
        await awaitCallback(timeout: timeout) { report in
            self.perform { self.shutdown { report(true) } }
        } ?? false
    }
}
