import CurlewOperations
import Dispatch
import Foundation

/// Operations run as one batch: progress as members finish, and one completion after every
/// member's own completion — AFNetworking's `batchOfRequestOperations:progressBlock:completionBlock:`,
/// with a handle to cancel the batch and an async form.
///
/// Making a batch changes nothing about how its members run: put ``operations`` (the members and
/// the ``completionOperation``) on one or more `OperationQueue`s, as with any operations.
///
/// ```swift
/// let batch = OperationBatch(of: [avatar, profile, feed], progress: { finished, total in
///     print("\(finished) of \(total)")
/// }, completion: { operations in
///     print("all", operations.count, "done")
/// })
/// queue.addOperations(batch.operations, waitUntilFinished: false)
/// ```
///
/// In `async` code, where `addOperations(_:waitUntilFinished:)` is unavailable, add them one by one
/// and await the members' results:
///
/// ```swift
/// for operation in batch.operations { queue.addOperation(operation) }
/// let results = try await batch.results()        // each member's Result, in input order
/// ```
///
/// How it works, as in AFNetworking: the batch enters one `DispatchGroup` per member; each member's
/// completion is wrapped so that its own completion runs first, then the batch's progress is
/// reported, then the group is left; the ``completionOperation`` depends on every member and, once
/// started, delivers the batch completion when the group is empty.
///
/// What the batch guarantees:
/// - **A member's own completion first.** For a `RequestOperation`, its success or failure
///   handler (on its `completionQueue`) and its `completionBlock` have both returned before the
///   batch counts it. For any other `Operation` (`BlockOperation`, your subclasses), its
///   `completionBlock` has returned.
/// - **Progress** runs on the batch's queue with the number of members counted and the total:
///   1, 2, … up to the total, each value exactly once, in rising order, never concurrently. An empty
///   batch reports no progress.
/// - **The completion** runs exactly once, on the batch's queue, after the last progress, with the
///   members in input order — also for an empty batch, with no members. It runs once the
///   ``completionOperation`` has been started (by a queue or by hand), which then finishes after
///   the completion returned, so operations that depend on it start after that.
/// - The batch's queue is one you choose, or a queue of the library's: never the main queue unless
///   you choose it (or made it the default with `RequestOperation/defaultCallbackQueues`).
///
/// Members may run on different engines and backends, on different queues, and may depend on each
/// other. An operation listed twice is a member once. ``cancel()`` cancels every member not counted
/// yet; each member still finishes exactly once (a cancelled member counts as finished, so the
/// batch still completes).
///
/// Make the batch before its members start. A member that had already finished counts at once. One
/// that is executing counts when it finishes — but if its response was already being processed
/// when the batch was made, its handler may run after the batch counted it (it had entered its
/// completion group before the batch could take that over). Set a member's `completionBlock`
/// before making the batch: the batch chains the block it finds, and a block set afterwards
/// replaces the batch's wrapper, so the member is never counted and the batch never completes.
///
/// The batch takes over each request operation's `completionGroup` while it runs (to know when its
/// handler has returned) and gives it back after: a group you had set is entered when the batch is
/// made and left once the member's handler has run, so `notify` on it still follows the handler.
/// Each member's `completionBlock` is wrapped and then restored to yours once it ran (on Linux,
/// Foundation never clears a `completionBlock` after running it; Darwin does).
///
/// Nobody needs to keep the batch: each unfinished member keeps it alive. That is also what
/// Foundation on Linux requires — an operation released while one of its dependencies is
/// unfinished crashes the process when that dependency finishes — so a batch whose members are
/// never started stays in memory with them.
///
/// Every stored property is immutable and `Sendable`; the mutable state lives in the core, under its
/// lock.
public final class OperationBatch: Sendable {
    /// A member's outcome: for a `RequestOperation`, its `responseObject` or its `error`; for any
    /// other operation, `nil`, or `CancellationError` if it was cancelled.
    public typealias MemberResult = Result<(any Sendable)?, any Error>

    /// The members, in input order (an operation listed twice appears once).
    public let members: [Operation]

    /// The operation that depends on every member and delivers the batch completion: started (by
    /// a queue once the members finished, or by hand), it waits until every member has been
    /// counted, runs the completion on the batch's queue, and then finishes.
    ///
    /// It always delivers the completion, even when cancelled: cancelling it (for example with
    /// `OperationQueue.cancelAllOperations()`) only makes Foundation start it early, and it still
    /// waits for the members.
    public let completionOperation: Operation

    /// The bookkeeping the members, the completion operation and this handle share.
    let core: Core

    /// Makes a batch of `operations`; nothing runs until they are started.
    ///
    /// - Parameters:
    ///   - operations: The members: `RequestOperation`s (on any engine) and any other
    ///     `Operation`s, not started yet. An empty array makes an empty batch.
    ///   - queue: Where `progress` and `completion` run (one after the other: the batch uses a
    ///     serial queue targeting this one). `nil`: the completion queue of
    ///     `RequestOperation/defaultCallbackQueues`, the library's own unless changed.
    ///   - progress: Called as members finish with the number finished so far and the total.
    ///   - completion: Called once after every member's own completion, with ``members``.
    public init(
        of operations: [Operation],
        queue: DispatchQueue? = nil,
        progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)? = nil,
        completion: (@Sendable (_ operations: [Operation]) -> Void)? = nil
    ) {
        var seen = Set<ObjectIdentifier>()
        let members = operations.filter { seen.insert(ObjectIdentifier($0)).inserted }
        let target = queue ?? RequestOperation.defaultCallbackQueues.completion
        let core = Core(
            members: members,
            queue: DispatchQueue(label: "curlew.batch", target: target),
            progress: progress,
            completion: completion
        )
        let completionOperation = BatchCompletionOperation(core: core)
        for index in members.indices {
            completionOperation.addDependency(members[index])
            core.watch(memberAt: index, for: completionOperation)
        }
        self.members = members
        self.completionOperation = completionOperation
        self.core = core
    }

    /// The members followed by the ``completionOperation``: what to put on a queue.
    ///
    /// ```swift
    /// queue.addOperations(batch.operations, waitUntilFinished: false)
    /// ```
    public var operations: [Operation] {
        self.members + [self.completionOperation]
    }

    /// Cancels every member that has not finished yet; members that finished are left alone.
    ///
    /// Each cancelled member still finishes exactly once (a `RequestOperation` with its
    /// cancellation error), is counted, and the batch completes as usual. Cancelling twice, or after
    /// the batch completed, does nothing more.
    public func cancel() {
        self.core.cancelUncountedMembers()
    }
}
