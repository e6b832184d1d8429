import CurlewTransport

extension RequestOperation {
    /// The operation's ``TransferObserver``, called where the transport delivers events (the
    /// engine's network context). It only records and hops: no serialization and no user code run
    /// here, because every transfer of the engine waits while an event is handled.
    ///
    /// A separate object so that the observer methods are not part of the operation's public API.
    /// The transfer keeps it, and so the operation, alive until the transfer completes.
    final class TransferEvents: TransferObserver, Sendable {
        let operation: RequestOperation

        init(operation: RequestOperation) {
            self.operation = operation
        }

        func transferDidUpdate(_ progress: TransferProgress) {
            self.operation.transferDidUpdate(progress)
        }

        func transferDidComplete(with result: Result<TransferResponse, TransferError>) {
            self.operation.transferDidComplete(result)
        }
    }
}
