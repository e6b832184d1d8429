import Foundation

extension OperationBatch {
    /// Waits until every member has finished (and its own completion has run) and returns each
    /// member's result, in input order.
    ///
    /// This starts nothing: put ``operations`` (or at least ``members``) on a queue, before or after
    /// calling this. It does not wait for the batch completion or the ``completionOperation``. A
    /// failure does not cancel the other members unless `failFast` is `true`: then the first failure
    /// (or one that already happened) cancels every member not finished yet, and this returns once
    /// they all finished, with their cancellation errors in place.
    ///
    /// If the awaiting task is cancelled first, every member not finished yet is cancelled and this
    /// throws `CancellationError` at once, without waiting for them (they still finish exactly once,
    /// on their queues). Any number of tasks may wait; a batch whose members all finished answers
    /// immediately, and an empty batch with no results.
    ///
    /// ```swift
    /// let batch = OperationBatch(of: requests)
    /// for operation in batch.operations { queue.addOperation(operation) }
    /// for case .failure(let error) in try await batch.results(failFast: true) {
    ///     print("failed:", error)
    /// }
    /// ```
    ///
    /// - Parameter failFast: Whether the first failure cancels the members still running.
    /// - Returns: One ``MemberResult`` per member, in the order of ``members``.
    /// - Throws: `CancellationError` when the awaiting task was cancelled first.
    public func results(failFast: Bool = false) async throws -> [MemberResult] {
        let core = self.core
        let ticket = core.storage.withLock { state -> UInt64 in
            state.nextWaiterTicket += 1
            return state.nextWaiterTicket
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[MemberResult], any Error>) in
                let (ready, cancelling) = core.storage.withLock { state -> (Result<[MemberResult], any Error>?, Bool) in
                    if state.machine.isComplete { return (.success(state.results.compactMap { $0 }), false) }
                    // The task's cancellation flag is set before its handler runs, so either the
                    // handler finds this waiter, or this sees the flag.
                    if Task.isCancelled { return (.failure(CancellationError()), false) }
                    state.waiters[ticket] = continuation
                    return (nil, failFast && state.machine.failFastRequested())
                }
                if cancelling { core.cancelUncountedMembers() }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            core.cancelUncountedMembers()
            let waiter = core.storage.withLock { $0.waiters.removeValue(forKey: ticket) }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
