import CurlewOperations
import CurlewTransport
import Dispatch
import Foundation

// How events become effects.
//
// Every event (a member finished, the completion operation started, the group emptied, a cancel,
// an awaiting caller) runs the state machine under the core's one lock. User code — progress, the
// completion, a member's `completionBlock`, `cancel()` of a member, the `didChangeValue(forKey:)`
// posts — always runs after the lock is released.
//
// Ordering does not rest on the lock but on the batch's serial queue: members are counted there,
// each count is reported there before the next one is made, and the group's notify (submitted by
// the last `leave()`, itself on that queue) runs there after the last progress.
extension OperationBatch {
    /// What the members, the completion operation and the handle share.
    ///
    /// Safety: `@unchecked Sendable` because the mutable state is in `storage`, guarded by its lock;
    /// everything else is immutable (`DispatchGroup` and `DispatchQueue` are thread-safe).
    final class Core: @unchecked Sendable {
        /// The mutable part, under the lock.
        struct Storage: Sendable {
            var machine: StateMachine
            var progress: (@Sendable (Int, Int) -> Void)?
            var completion: (@Sendable ([Operation]) -> Void)?
            /// Each member's result, once counted.
            var results: [MemberResult?]
            /// Tasks awaiting every member's result, by ticket.
            var waiters: [UInt64: CheckedContinuation<[MemberResult], any Error>] = [:]
            var nextWaiterTicket: UInt64 = 0
        }

        let members: [Operation]
        /// The serial queue progress and the completion run on (it targets the caller's queue).
        let queue: DispatchQueue
        /// Entered once per member at creation, left once the member has been counted.
        let group = DispatchGroup()
        /// Per member: the group its own success/failure handler runs in, for request operations.
        let handlerGroups: [DispatchGroup?]
        /// Per member: the completion group a request operation had before the batch took it over.
        let outerGroups: [DispatchGroup?]
        let storage: Locked<Storage>

        init(
            members: [Operation],
            queue: DispatchQueue,
            progress: (@Sendable (Int, Int) -> Void)?,
            completion: (@Sendable ([Operation]) -> Void)?
        ) {
            self.members = members
            self.queue = queue
            let requests = members.map { $0 as? RequestOperation }
            self.handlerGroups = requests.map { $0 == nil ? nil : DispatchGroup() }
            self.outerGroups = requests.map { $0?.completionGroup }
            self.storage = Locked(Storage(
                machine: StateMachine(total: members.count),
                progress: progress,
                completion: completion,
                results: Array(repeating: nil, count: members.count)
            ))
        }

        /// Unfinished members keep the batch alive (see `OperationBatch+Members.swift`), so it goes
        /// away with members not counted only if their wrapped `completionBlock` was replaced. Leave
        /// what it entered for them, so that no group is released while entered (libdispatch traps
        /// on that).
        deinit {
            let uncounted = self.storage.withLock { $0.machine.uncountedMembers }
            for index in uncounted {
                self.outerGroups[index]?.leave()
                self.group.leave()
            }
        }

        // MARK: Members

        /// Member `index` has finished and its `completionBlock` (if any) has run: count it once its
        /// own handler has returned too.
        func memberDidFinish(at index: Int) {
            if let handlerGroup = self.handlerGroups[index] {
                handlerGroup.notify(queue: self.queue) { self.count(memberAt: index) }
            } else {
                self.queue.async { self.count(memberAt: index) }
            }
        }

        /// What counting a member leaves to do once the lock is released.
        private struct Counted {
            var count: StateMachine.Count
            var progress: (@Sendable (Int, Int) -> Void)?
            /// Fail-fast fired: the members to cancel.
            var cancelling: [Int] = []
            /// The last member: the tasks to resume, and every result in input order.
            var waiters: [CheckedContinuation<[MemberResult], any Error>] = []
            var results: [MemberResult] = []
        }

        /// On ``queue``: counts member `index` (once), reports progress, leaves the groups, and hands
        /// the results to the awaiting tasks when it was the last.
        private func count(memberAt index: Int) {
            let result = Self.result(of: self.members[index])
            let counted = self.storage.withLock { state -> Counted? in
                guard let count = state.machine.memberFinished(at: index, failed: result.isFailure) else { return nil }
                state.results[index] = result
                var counted = Counted(count: count, progress: state.progress)
                if count.cancelsUnfinished {
                    counted.cancelling = state.machine.uncountedMembers
                }
                if count.isLast {
                    counted.waiters = Array(state.waiters.values)
                    counted.results = state.results.compactMap { $0 }
                    state.waiters = [:]
                }
                return counted
            }
            guard let counted else { return }
            self.cancel(counted.cancelling)
            self.outerGroups[index]?.leave()
            counted.progress?(counted.count.finished, counted.count.total)
            self.group.leave()
            for waiter in counted.waiters {
                waiter.resume(returning: counted.results)
            }
        }

        /// Cancels the members not counted yet.
        func cancelUncountedMembers() {
            self.cancel(self.storage.withLock { $0.machine.uncountedMembers })
        }

        private func cancel(_ indices: [Int]) {
            for index in indices {
                self.members[index].cancel()
            }
        }

        /// What a finished member produced.
        private static func result(of member: Operation) -> MemberResult {
            if let request = member as? RequestOperation {
                if let error = request.error { return .failure(error) }
                return .success(request.responseObject)
            }
            return member.isCancelled ? .failure(CancellationError()) : .success(nil)
        }

        // MARK: The completion operation

        /// The completion operation was started: wait for the group, then deliver.
        func completionOperationStarted(_ operation: BatchCompletionOperation) {
            let (waits, posts) = self.storage.withLock { $0.machine.completionOperationStarted() }
            guard waits else { return }
            for key in posts {
                operation.didChangeValue(forKey: key.rawValue)
            }
            self.group.notify(queue: self.queue) {
                self.groupEmptied(operation)
            }
        }

        /// On ``queue``, after the last member's progress: the completion, then the finish.
        private func groupEmptied(_ operation: BatchCompletionOperation) {
            let completion = self.storage.withLock { state -> (@Sendable ([Operation]) -> Void)? in
                state.machine.groupEmptied()
                defer {
                    state.completion = nil
                    state.progress = nil
                }
                return state.completion
            }
            completion?(self.members)
            let posts = self.storage.withLock { $0.machine.completionDelivered() }
            for key in posts {
                operation.didChangeValue(forKey: key.rawValue)
            }
        }
    }
}

extension Result {
    /// Whether this is a failure.
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
