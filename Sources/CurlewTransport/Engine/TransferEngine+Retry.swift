import Foundation

extension TransferEngine {
    /// Runs `request` to completion, sending it again as `policy` says after a failed attempt, as
    /// far as the engine's ``retryBudget`` allows.
    ///
    /// Each attempt is a transfer of its own: a streamed body (a file, or multipart parts) is opened
    /// again from its start, and each attempt has the request's own timeouts. The waits between
    /// attempts suspend the calling task (nothing is blocked); cancelling the task cancels the
    /// running attempt or ends the wait at once, and this throws ``TransferError/Code/cancelled``
    /// once. A response whose status is retryable but that has no attempt left, or whose retry the
    /// budget refuses, is returned as it is.
    ///
    /// ```swift
    /// let response = try await engine.execute(request, retry: .default)
    /// print(response.metrics.retryCount)   // 0 when the first attempt did it
    /// ```
    ///
    /// - Parameters:
    ///   - request: What to send.
    ///   - policy: When to send it again (``RetryPolicy``).
    /// - Returns: The last attempt's response; its ``TransferMetrics/retryCount`` says how many
    ///   retries were made.
    /// - Throws: The last attempt's ``TransferError``, or ``TransferError/Code/cancelled``.
    public func execute(_ request: TransferRequest, retry policy: RetryPolicy) async throws(TransferError) -> TransferResponse {
        try await self.execute(request, retry: policy, budget: self.retryBudget)
    }

    /// ``execute(_:retry:)`` with another ``RetryBudget`` than the engine's, or none (`nil`: every
    /// retry the policy asks for is made).
    ///
    /// - Parameters:
    ///   - request: What to send.
    ///   - policy: When to send it again (``RetryPolicy``).
    ///   - budget: The budget the retries draw on, shared with the other requests that use it.
    /// - Returns: The last attempt's response.
    /// - Throws: The last attempt's ``TransferError``, or ``TransferError/Code/cancelled``.
    public func execute(
        _ request: TransferRequest, retry policy: RetryPolicy, budget: RetryBudget?
    ) async throws(TransferError) -> TransferResponse {
        var random = SystemRandomSource()
        var attempt = 1
        if policy.maximumAttempts > 1 { budget?.recordFirstAttempt() }
        while true {
            let outcome: Result<TransferResponse, TransferError>
            do {
                outcome = .success(try await self.execute(request))
            } catch {
                outcome = .failure(error)
            }
            let decision = policy.decide(after: outcome.map(\.head), method: request.head.method, attempt: attempt,
                                         using: &random)
            // A streamed body that curl has read cannot be sent again: the attempt's outcome stands.
            guard case .retry(let wait) = decision, request.canBeSentAgain, budget?.withdrawRetry() ?? true else {
                var response = try outcome.get()
                response.metrics.retryCount = attempt - 1
                return response
            }
            do {
                try await Task.sleep(for: wait)
            } catch {
                throw TransferError.cancelled(url: request.url)
            }
            attempt += 1
        }
    }
}
