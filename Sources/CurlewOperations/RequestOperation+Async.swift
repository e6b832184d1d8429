import CurlewTransport
import Foundation

extension RequestOperation {
    /// Waits for the operation to finish and returns its ``responseObject``, or throws its
    /// ``error``.
    ///
    /// This starts nothing: start the operation yourself or put it on a queue, before or after
    /// calling this. If the awaiting task is cancelled first, the operation is cancelled and this
    /// throws the cancellation error (a `TransferError` with code `TransferError/Code/cancelled`)
    /// at once, even if the operation was never started. Any number of tasks may wait; an operation
    /// that already finished answers immediately.
    ///
    /// ```swift
    /// let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
    /// queue.addOperation(operation)
    /// let data = try await operation.responseObject() as? Data
    /// ```
    ///
    /// - Returns: What the ``responseSerializer`` made of the response.
    /// - Throws: The transfer's `TransferError`, or the serializer's error.
    public func responseObject() async throws -> (any Sendable)? {
        let ticket = self.storage.withLock { state -> UInt64 in
            state.nextWaiterTicket += 1
            return state.nextWaiterTicket
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(any Sendable)?, any Error>) in
                let ready = self.storage.withLock { state -> Result<(any Sendable)?, any Error>? in
                    if let result = state.result { return result }
                    // The task's cancellation flag is set before its handler runs, so either the
                    // handler finds this waiter, or this sees the flag.
                    if Task.isCancelled { return .failure(TransferError.cancelled(url: self.request.url)) }
                    state.waiters[ticket] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            self.cancel()
            let waiter = self.storage.withLock { $0.waiters.removeValue(forKey: ticket) }
            waiter?.resume(throwing: TransferError.cancelled(url: self.request.url))
        }
    }
}
