import Foundation

extension OperationQueue {
    /// Adds `operations`, in order, without waiting: what `addOperations(_:waitUntilFinished: false)`
    /// does, usable from `async` code (where that method is unavailable, because it can wait).
    ///
    /// ```swift
    /// queue.enqueue(batch.operations)
    /// ```
    public func enqueue(_ operations: [Operation]) {
        for operation in operations {
            self.addOperation(operation)
        }
    }
}
