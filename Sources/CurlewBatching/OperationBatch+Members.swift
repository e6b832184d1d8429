import CurlewOperations
import Dispatch
import Foundation

// How the batch learns that a member's own completion is over.
//
// Every `Operation` has a `completionBlock`, which Foundation runs once the operation is finished
// (on Linux: on a global queue, and the block is kept afterwards). The batch wraps it: the wrapper
// runs the member's own block, then tells the batch. For a `RequestOperation` that is not enough —
// its success or failure handler runs on its completion queue, unordered with the block — so the
// batch also gives it a completion group of its own for the run: the operation enters it before it
// posts `isFinished` (so before the wrapper can run) and leaves it after the handler returned, and
// the batch counts the member from that group's `notify`.
//
// The wrapper holds the member weakly: on Linux a member keeps its `completionBlock` after running
// it, so a strong capture would be a cycle. It puts the member's own block and group back before
// anything else, so that the member looks as it did before the batch once it is done, and the
// wrapper — with what it holds — goes away.
//
// The wrapper holds the batch's completion operation strongly, and through it the batch. That is
// what keeps a batch alive while its members run (nobody else need hold it), and it is required by
// Foundation on Linux: an operation keeps an *unretained* pointer to each operation that depends
// on it, so a completion operation released before a member finishes makes the member's finish
// dereference freed memory and crash the process. Each member, through its wrapper, therefore
// keeps the completion operation alive until it has finished.
extension OperationBatch.Core {
    /// Enters the groups for member `index`, takes over its completion (the wrapper keeping
    /// `completionOperation` alive), and counts it at once if it had already finished.
    func watch(memberAt index: Int, for completionOperation: BatchCompletionOperation) {
        let member = self.members[index]
        self.group.enter()
        self.outerGroups[index]?.enter()
        let ownBlock = member.completionBlock
        let ownGroup = self.outerGroups[index]
        if let request = member as? RequestOperation, let handlerGroup = self.handlerGroups[index] {
            request.completionGroup = handlerGroup
        }
        member.completionBlock = { [weak member] in
            if let member {
                Self.giveBack(member, block: ownBlock, group: ownGroup)
            }
            ownBlock?()
            completionOperation.core.memberDidFinish(at: index)
        }
        if member.isFinished {
            // Finished before the wrapper was in place: Foundation may never run it. Counting is
            // idempotent, so the wrapper running too changes nothing.
            Self.giveBack(member, block: ownBlock, group: ownGroup)
            self.memberDidFinish(at: index)
        }
    }

    /// Restores the member's own `completionBlock` and, for a request operation, its own
    /// completion group.
    private static func giveBack(_ member: Operation, block: (@Sendable () -> Void)?, group: DispatchGroup?) {
        member.completionBlock = block
        if let request = member as? RequestOperation {
            request.completionGroup = group
        }
    }
}
