import Foundation

/// A batch's ``OperationBatch/completionOperation``: depends on every member; started, it waits
/// until the batch's group is empty, delivers the batch completion, then finishes.
///
/// Asynchronous, like `RequestOperation`: `start()` returns at once and the operation finishes
/// later, from the batch's queue, with the `didChangeValue(forKey:)` posts Foundation's queue
/// observes on Linux. Its state is the batch's state machine's, under the batch's lock. It ignores
/// `isCancelled` and readiness on purpose: the group, not the dependencies, orders the completion
/// after the members, so starting it early (Foundation does that to a cancelled operation) only
/// makes it wait longer, and the completion is never lost.
///
/// Safety: `@unchecked Sendable` because its only stored property is immutable and its state lives
/// in the core, under the core's lock.
final class BatchCompletionOperation: Operation, @unchecked Sendable {
    let core: OperationBatch.Core

    init(core: OperationBatch.Core) {
        self.core = core
        super.init()
    }

    override var isAsynchronous: Bool { true }

    override var isExecuting: Bool {
        self.core.storage.withLock { $0.machine.isCompletionExecuting }
    }

    override var isFinished: Bool {
        self.core.storage.withLock { $0.machine.isCompletionFinished }
    }

    override func start() {
        self.core.completionOperationStarted(self)
    }

    override var description: String {
        let (state, finished, total) = self.core.storage.withLock {
            ($0.machine.completion, $0.machine.finishedCount, $0.machine.total)
        }
        return "<OperationBatch completion: \(state), \(finished) of \(total) members finished>"
    }
}
