import Foundation

extension TransferEngine {
    /// Runs `request` to completion, sending it again as `policy` says after a failed attempt.
    ///
    /// Each attempt is a transfer of its own: a streamed body (a file, or multipart parts) is opened
    /// again from its start, and each attempt has the request's own timeouts. The waits between
    /// attempts suspend the calling task (nothing is blocked); cancelling the task cancels the
    /// running attempt or ends the wait at once, and this throws ``TransferError/Code/cancelled``
    /// once. A response whose status is retryable but that has no attempt left is returned as it is.
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
        var random = SystemRandomSource()
        var attempt = 1
        while true {
            let outcome: Result<TransferResponse, TransferError>
            do {
                outcome = .success(try await self.execute(request))
            } catch {
                outcome = .failure(error)
            }
            let decision = policy.decide(after: outcome.map(\.head), method: request.head.method, attempt: attempt,
                                         using: &random)
            guard case .retry(let wait) = decision else {
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
