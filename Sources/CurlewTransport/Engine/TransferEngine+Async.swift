import Foundation

extension TransferEngine {
    /// Runs `request` to completion.
    ///
    /// Cancelling the calling task cancels the transfer, which then throws
    /// ``TransferError/Code/cancelled``.
    ///
    /// - Throws: ``TransferError`` when the transfer fails. An HTTP error status is not a failure.
    public func execute(_ request: TransferRequest) async throws(TransferError) -> TransferResponse {
        let waiter = CompletionWaiter()
        let transfer = self.makeTransfer(request, delegate: waiter)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<TransferResponse, TransferError>, Never>) in
                waiter.wait(with: continuation)
                transfer.start()
            }
        } onCancel: {
            transfer.cancel()
        }
        return try result.get()
    }
}

/// Hands a transfer's one result to one continuation, whichever arrives first.
///
/// Safety: `@unchecked Sendable` because its state is guarded by `state`'s lock.
private final class CompletionWaiter: TransferDelegate, @unchecked Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Result<TransferResponse, TransferError>, Never>)
        case done(Result<TransferResponse, TransferError>)
    }

    private let state = Locked(State.empty)

    func wait(with continuation: CheckedContinuation<Result<TransferResponse, TransferError>, Never>) {
        let ready: Result<TransferResponse, TransferError>? = self.state.withLock { state in
            if case .done(let result) = state { return result }
            state = .waiting(continuation)
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        let waiting: CheckedContinuation<Result<TransferResponse, TransferError>, Never>? = self.state.withLock { state in
            if case .waiting(let continuation) = state {
                state = .done(result)
                return continuation
            }
            state = .done(result)
            return nil
        }
        waiting?.resume(returning: result)
    }
}
