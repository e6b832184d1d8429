extension OperationBatch {
    /// The bookkeeping of one batch, as a value with no I/O: which members have been counted, the
    /// progress they make, fail-fast, and the life of the completion operation.
    ///
    /// ```
    ///  members:   member i finished ──▶ counted once ──▶ progress (count, total), count rising by one
    ///                                                     the last count: every member is counted
    ///
    ///                     start                    group emptied                 completion returned
    ///  completion op: ready ────▶ waiting ─────────────────────────▶ completing ───────────────────▶ finished
    /// ```
    ///
    /// A member is counted at most once, whatever reports it (its wrapped `completionBlock`, or the
    /// check for a member that had already finished when the batch was made), so each progress value
    /// from 1 to the total is produced exactly once, in rising order, and the total exactly once.
    ///
    /// Fail-fast is a latch: once asked for, the first failure (or one already counted) says "cancel
    /// the members not counted yet", once.
    ///
    /// The completion operation is asynchronous: started, it waits (executing) until the batch's
    /// dispatch group is empty, delivers the batch completion (still executing), and only then
    /// finishes, so whatever waits for it or depends on it comes after the completion returned. The
    /// events return the `didChangeValue(forKey:)` posts Foundation's queue needs, `isExecuting`
    /// before `isFinished`. Starting it again is ignored; the group emptying twice, or a completion
    /// delivered without one, cannot happen and trap.
    package struct StateMachine: Hashable, Sendable {
        /// Where the completion operation is in its life.
        package enum CompletionState: Hashable, Sendable, CaseIterable {
            /// Not started.
            case ready
            /// Started: waiting for every member to leave the batch's group.
            case waiting
            /// The group is empty: the batch completion is being delivered.
            case completing
            /// The batch completion has returned. Terminal.
            case finished
        }

        /// A key whose `didChangeValue(forKey:)` Foundation's `OperationQueue` observes.
        package enum Key: String, Hashable, Sendable {
            case isExecuting
            case isFinished
        }

        /// What counting one member produced.
        package struct Count: Hashable, Sendable {
            /// Members counted so far, this one included: the progress value to report.
            package var finished: Int
            /// Members in the batch.
            package var total: Int
            /// Fail-fast fired with this member: cancel the members not counted yet.
            package var cancelsUnfinished: Bool

            package init(finished: Int, total: Int, cancelsUnfinished: Bool = false) {
                self.finished = finished
                self.total = total
                self.cancelsUnfinished = cancelsUnfinished
            }

            /// Whether this was the last member: every member is counted.
            package var isLast: Bool { self.finished == self.total }
        }

        /// Fail-fast's latch.
        private enum FailFast: Hashable, Sendable {
            case off
            case armed
            case fired
        }

        /// Members in the batch.
        package let total: Int
        /// Members counted so far.
        package private(set) var finishedCount = 0
        /// Where the completion operation is.
        package private(set) var completion = CompletionState.ready
        private var counted: [Bool]
        private var hasFailure = false
        private var failFast = FailFast.off

        /// Creates the machine of a batch of `total` members, none counted, the completion
        /// operation ready.
        package init(total: Int) {
            self.total = total
            self.counted = Array(repeating: false, count: total)
        }

        /// Whether every member has been counted (at once for an empty batch).
        package var isComplete: Bool {
            self.finishedCount == self.total
        }

        /// The members not counted yet, in input order: what cancelling the batch cancels.
        package var uncountedMembers: [Int] {
            self.counted.indices.filter { !self.counted[$0] }
        }

        /// What `Operation.isExecuting` answers for the completion operation.
        package var isCompletionExecuting: Bool {
            self.completion == .waiting || self.completion == .completing
        }

        /// What `Operation.isFinished` answers for the completion operation.
        package var isCompletionFinished: Bool {
            self.completion == .finished
        }

        // MARK: Members

        /// Member `index` finished and its own completion has run; `failed` says whether its result
        /// is a failure.
        ///
        /// - Returns: The count to report, or `nil` when the member was already counted.
        package mutating func memberFinished(at index: Int, failed: Bool) -> Count? {
            guard self.counted.indices.contains(index) else {
                fatalError("Internal inconsistency: member \(index) of a batch of \(self.total).")
            }
            guard !self.counted[index] else { return nil }
            self.counted[index] = true
            self.finishedCount += 1
            var count = Count(finished: self.finishedCount, total: self.total)
            if failed {
                self.hasFailure = true
                count.cancelsUnfinished = self.fireFailFastIfArmed()
            }
            return count
        }

        /// A caller asked to cancel the members not counted yet at the first failure.
        ///
        /// - Returns: Whether to cancel them now: a failure was already counted (only the first
        ///   request after it says so).
        package mutating func failFastRequested() -> Bool {
            if self.failFast == .off { self.failFast = .armed }
            return self.hasFailure && self.fireFailFastIfArmed()
        }

        private mutating func fireFailFastIfArmed() -> Bool {
            guard self.failFast == .armed else { return false }
            self.failFast = .fired
            return true
        }

        // MARK: The completion operation

        /// The completion operation was started.
        ///
        /// - Returns: `true` with the posts to make when it starts waiting for the group (then
        ///   notify the group); `false` and nothing to post when it had already started.
        package mutating func completionOperationStarted() -> (waits: Bool, posts: [Key]) {
            switch self.completion {
            case .ready:
                self.completion = .waiting
                return (true, [.isExecuting])
            case .waiting, .completing, .finished:
                return (false, [])
            }
        }

        /// The batch's group is empty (its notify ran): deliver the batch completion.
        package mutating func groupEmptied() {
            switch self.completion {
            case .waiting:
                self.completion = .completing
            case .ready, .completing, .finished:
                fatalError("Internal inconsistency: the batch's group emptied while its completion operation was \(self.completion).")
            }
        }

        /// The batch completion has returned.
        ///
        /// - Returns: The posts that finish the completion operation.
        package mutating func completionDelivered() -> [Key] {
            switch self.completion {
            case .completing:
                self.completion = .finished
                return [.isExecuting, .isFinished]
            case .ready, .waiting, .finished:
                fatalError("Internal inconsistency: a batch completion was delivered while its operation was \(self.completion).")
            }
        }
    }
}
