import CurlewBatching
import CurlewTestSupport
import Testing

typealias BatchMachine = OperationBatch.StateMachine

/// The batch's bookkeeping, without I/O: counting, progress values, fail-fast, the completion
/// operation's life.
@Suite("OperationBatch: state machine")
struct BatchStateMachineTests {
    @Test("each member counts once; progress rises by one to the total, which comes once")
    func countsOnce() {
        var machine = BatchMachine(total: 3)
        #expect(!machine.isComplete && machine.uncountedMembers == [0, 1, 2])
        #expect(machine.memberFinished(at: 2, failed: false) == .init(finished: 1, total: 3))
        #expect(machine.memberFinished(at: 2, failed: false) == nil, "counted twice")
        #expect(machine.memberFinished(at: 0, failed: true) == .init(finished: 2, total: 3))
        #expect(machine.uncountedMembers == [1])
        let last = machine.memberFinished(at: 1, failed: false)
        #expect(last == .init(finished: 3, total: 3) && last?.isLast == true)
        #expect(machine.isComplete && machine.uncountedMembers.isEmpty && machine.finishedCount == 3)
        for index in 0..<3 {
            #expect(machine.memberFinished(at: index, failed: false) == nil)
        }
    }

    @Test("an empty batch is complete at once")
    func empty() {
        let machine = BatchMachine(total: 0)
        #expect(machine.isComplete && machine.uncountedMembers.isEmpty)
    }

    /// Any order, any repeats: the counts reported are exactly 1…n in order, whatever reports
    /// members, how often, in which order.
    @Test("any order of reports, with repeats, gives 1…n exactly", arguments: [1, 2, 7, 100])
    func anyOrder(_ total: Int) {
        var generator = SplitMix64(seed: UInt64(total))
        var machine = BatchMachine(total: total)
        var reported: [Int] = []
        while !machine.isComplete {
            let index = Int(generator.next() % UInt64(total))
            if let count = machine.memberFinished(at: index, failed: false) {
                reported.append(count.finished)
                #expect(count.isLast == (count.finished == total))
            }
        }
        #expect(reported == Array(1...total))
    }

    @Test("fail-fast: a latch that fires once, at the first failure or at once after one")
    func failFast() {
        var machine = BatchMachine(total: 4)
        #expect(machine.memberFinished(at: 0, failed: true)?.cancelsUnfinished == false, "not asked for: no cancel")
        let askedAfterFailure = machine.failFastRequested()
        let askedAgain = machine.failFastRequested()
        #expect(askedAfterFailure, "asked after a failure: cancel now")
        #expect(!askedAgain, "fires once")
        #expect(machine.memberFinished(at: 1, failed: true)?.cancelsUnfinished == false)

        var armed = BatchMachine(total: 3)
        let askedEarly = armed.failFastRequested()
        #expect(!askedEarly, "nothing failed yet")
        #expect(armed.memberFinished(at: 0, failed: false)?.cancelsUnfinished == false)
        #expect(armed.memberFinished(at: 1, failed: true)?.cancelsUnfinished == true)
        #expect(armed.memberFinished(at: 2, failed: true)?.cancelsUnfinished == false, "fires once")
        let askedAfterFiring = armed.failFastRequested()
        #expect(!askedAfterFiring)
    }

    @Test("the completion operation: ready, waiting, completing, finished; posts in order")
    func completionOperation() {
        var machine = BatchMachine(total: 1)
        #expect(machine.completion == .ready && !machine.isCompletionExecuting && !machine.isCompletionFinished)
        let started = machine.completionOperationStarted()
        #expect(started.waits && started.posts == [.isExecuting])
        #expect(machine.completion == .waiting && machine.isCompletionExecuting)
        let again = machine.completionOperationStarted()
        #expect(!again.waits && again.posts.isEmpty, "started twice: ignored")
        machine.groupEmptied()
        #expect(machine.completion == .completing && machine.isCompletionExecuting && !machine.isCompletionFinished)
        let posts = machine.completionDelivered()
        #expect(posts == [.isExecuting, .isFinished])
        #expect(machine.completion == .finished && !machine.isCompletionExecuting && machine.isCompletionFinished)
        let afterFinish = machine.completionOperationStarted()
        #expect(!afterFinish.waits)
    }

    /// The group empties once, after the operation started; a completion is delivered once, after
    /// the group emptied. Anything else is a bug in the batch and traps.
    @Test("impossible events trap", arguments: BatchMachine.CompletionState.allCases)
    func impossibleEventsTrap(_ state: BatchMachine.CompletionState) async {
        let stateIndex = BatchMachine.CompletionState.allCases.firstIndex(of: state) ?? 0
        if state != .waiting {
            await #expect(processExitsWith: .failure) { [stateIndex = stateIndex as Int] in
                var machine = BatchMachine.driven(to: BatchMachine.CompletionState.allCases[stateIndex])
                machine.groupEmptied()
            }
        }
        if state != .completing {
            await #expect(processExitsWith: .failure) { [stateIndex = stateIndex as Int] in
                var machine = BatchMachine.driven(to: BatchMachine.CompletionState.allCases[stateIndex])
                _ = machine.completionDelivered()
            }
        }
        await #expect(processExitsWith: .failure) {
            var machine = BatchMachine(total: 2)
            _ = machine.memberFinished(at: 2, failed: false)
        }
    }
}

extension BatchMachine {
    /// A machine of one member whose completion operation has been driven to `state`.
    static func driven(to state: CompletionState) -> BatchMachine {
        var machine = BatchMachine(total: 1)
        guard state != .ready else { return machine }
        _ = machine.completionOperationStarted()
        guard state != .waiting else { return machine }
        machine.groupEmptied()
        guard state != .completing else { return machine }
        _ = machine.completionDelivered()
        return machine
    }
}
