import CurlewTransport

extension RequestOperation {
    /// The operation's ``TransferDelegate``, on the network context. It only records and hops:
    /// no serialization and no user code run here, because every transfer of the engine waits
    /// while a delegate method runs.
    ///
    /// A separate object so that the delegate methods are not part of the operation's public API.
    /// The transfer keeps it, and so the operation, alive until the transfer completes.
    final class TransferEvents: TransferDelegate, Sendable {
        let operation: RequestOperation

        init(operation: RequestOperation) {
            self.operation = operation
        }

        func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) {
            self.operation.transferDidUpdate(progress)
        }

        func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
            self.operation.transferDidComplete(result)
        }
    }
}
