import CurlewOperations
import Dispatch
import Foundation

extension RequestOperation {
    /// Makes a batch of `operations` and returns what to put on a queue: the members followed by
    /// the operation that delivers the batch completion (AFNetworking's
    /// `batchOfRequestOperations:progressBlock:completionBlock:`).
    ///
    /// `progress` runs as members finish, `completion` once after every member's own completion
    /// handler, both on `queue`; see ``OperationBatch`` for the guarantees, and use it directly to
    /// keep a handle that cancels the batch or awaits its results.
    ///
    /// ```swift
    /// let operations = RequestOperation.batch(of: [first, second, third], progress: { finished, total in
    ///     print("\(finished)/\(total)")
    /// }, completion: { operations in
    ///     let failed = operations.compactMap { ($0 as? RequestOperation)?.error }
    ///     print("done,", failed.count, "failed")
    /// })
    /// queue.addOperations(operations, waitUntilFinished: false)
    /// ```
    ///
    /// - Parameters:
    ///   - operations: The members: request operations on any engine, and any other `Operation`s,
    ///     not started yet.
    ///   - queue: Where `progress` and `completion` run, one at a time. `nil`: the completion queue
    ///     of `RequestOperation/defaultCallbackQueues` (the library's own, not the main queue,
    ///     unless changed).
    ///   - progress: Called with the number of members finished so far and the total: each value
    ///     from 1 to the total once, in rising order.
    ///   - completion: Called once with the members, after every member's own completion; also for
    ///     an empty batch, with no members.
    /// - Returns: The members (an operation listed twice once) and, last, the completion operation.
    public static func batch(
        of operations: [Operation],
        queue: DispatchQueue? = nil,
        progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)? = nil,
        completion: (@Sendable (_ operations: [Operation]) -> Void)? = nil
    ) -> [Operation] {
        OperationBatch(of: operations, queue: queue, progress: progress, completion: completion).operations
    }
}
