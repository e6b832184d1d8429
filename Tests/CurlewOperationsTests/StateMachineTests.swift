import CurlewOperations
import CurlewTestSupport
import Testing

/// The machine with plain payloads: the transfer's outcome an `Int`, the processed result a `String`.
typealias Machine = RequestOperation.StateMachine<Int, String>
typealias MachineState = Machine.State
typealias MachineTransition = Machine.Transition

/// Every event the machine knows, with Foundation's readiness as a parameter of `start`.
enum MachineEvent: Hashable, CaseIterable, CustomTestStringConvertible {
    case startReady, startNotReady, startPreparing, cancel, pause, resume, transferCompleted, resultProcessed
    case retryScheduled, retryDue, retryDuePreparing, attemptPrepared, preparationFailed

    func apply(to machine: inout Machine) -> MachineTransition {
        switch self {
        case .startReady: return machine.start(isReady: true)
        case .startNotReady: return machine.start(isReady: false)
        case .startPreparing: return machine.start(isReady: true, preparing: true)
        case .cancel: return machine.cancel()
        case .pause: return machine.pause()
        case .resume: return machine.resume()
        case .transferCompleted: return machine.transferCompleted(MachineEvent.outcome)
        case .resultProcessed: return machine.resultProcessed(MachineEvent.processed)
        case .retryScheduled: return machine.retryScheduled(after: MachineEvent.wait)
        case .retryDue: return machine.retryDue(preparing: false)
        case .retryDuePreparing: return machine.retryDue(preparing: true)
        case .attemptPrepared: return machine.attemptPrepared()
        case .preparationFailed: return machine.preparationFailed(MachineEvent.preparationFailure)
        }
    }

    var testDescription: String { "\(self)" }

    /// The payloads the data-carrying events bring.
    static let outcome = 7
    static let processed = "processed"
    static let wait = Duration.milliseconds(250)
    static let preparationFailure = "adapting failed"
}

/// A point of the machine's space: a state and the cancellation flag.
struct MachinePoint: Hashable, CustomTestStringConvertible {
    var state: MachineState
    var isCancelled: Bool

    static let all: [MachinePoint] = MachineState.allCases.flatMap { [MachinePoint(state: $0, isCancelled: false), MachinePoint(state: $0, isCancelled: true)] }

    var machine: Machine { Machine(state: self.state, isCancelled: self.isCancelled) }
    var testDescription: String { "\(self.state)\(self.isCancelled ? "+cancelled" : "")" }
}

/// What an event must do from a point: the next point and the transition, or a trap.
enum ExpectedTransition {
    case transition(MachinePoint, MachineTransition)
    case traps
}

/// The table, written out independently of the implementation.
func expected(_ event: MachineEvent, from point: MachinePoint) -> ExpectedTransition {
    let (state, cancelled) = (point.state, point.isCancelled)
    let same = ExpectedTransition.transition(point, .none)
    func to(_ next: MachineState, _ action: Machine.Action, _ posts: [Machine.Key], cancelled nextCancelled: Bool? = nil) -> ExpectedTransition {
        .transition(MachinePoint(state: next, isCancelled: nextCancelled ?? cancelled), MachineTransition(action, posts: posts))
    }
    switch (event, state) {
    case (.startReady, .ready), (.startNotReady, .ready), (.startPreparing, .ready):
        if cancelled { return to(.finished, .finish(.withCancellation(nil)), [.isFinished]) }
        switch event {
        case .startReady: return to(.executing, .startTransfer, [.isExecuting])
        case .startPreparing: return to(.preparing, .prepareAttempt, [.isExecuting])
        default: return same
        }
    case (.startReady, _), (.startNotReady, _), (.startPreparing, _):
        return same

    case (.cancel, .finished):
        return same
    case (.cancel, _) where cancelled:
        return same
    case (.cancel, .ready), (.cancel, .completing):
        return to(state, .markCancelled, [], cancelled: true)
    case (.cancel, .executing), (.cancel, .paused):
        return to(state, .cancelTransfer, [], cancelled: true)
    case (.cancel, .preparing), (.cancel, .waiting):
        return to(.finished, .cancelPendingAttempt, [.isExecuting, .isFinished], cancelled: true)

    case (.pause, .executing):
        return cancelled ? same : to(.paused, .pauseTransfer, [.isExecuting])
    case (.pause, _):
        return same

    case (.resume, .paused):
        return cancelled ? same : to(.executing, .resumeTransfer, [.isExecuting])
    case (.resume, _):
        return same

    case (.transferCompleted, .executing):
        return to(.completing, .processResult(MachineEvent.outcome), [])
    case (.transferCompleted, .paused):
        return to(.completing, .processResult(MachineEvent.outcome), [.isExecuting])
    case (.transferCompleted, _):
        return .traps

    case (.resultProcessed, .completing):
        return to(.finished, .finish(cancelled ? .withCancellation(MachineEvent.processed) : .withResult(MachineEvent.processed)),
                  [.isExecuting, .isFinished])
    case (.resultProcessed, _):
        return .traps

    case (.retryScheduled, .completing):
        return cancelled ? same : to(.waiting, .waitForRetry(MachineEvent.wait), [])
    case (.retryScheduled, _):
        return same

    case (.retryDue, .waiting):
        return to(.executing, .startTransfer, [])
    case (.retryDuePreparing, .waiting):
        return to(.preparing, .prepareAttempt, [])
    case (.retryDue, _), (.retryDuePreparing, _):
        return same

    case (.attemptPrepared, .preparing):
        return to(.executing, .startTransfer, [])
    case (.attemptPrepared, _):
        return same

    case (.preparationFailed, .preparing):
        return to(.finished, .finish(.withResult(MachineEvent.preparationFailure)), [.isExecuting, .isFinished])
    case (.preparationFailed, _):
        return same
    }
}

/// Every (state, cancelled) point against every event that can happen there, with no I/O.
@Suite("RequestOperation state machine")
struct StateMachineTests {
    private static let possible: [(MachinePoint, MachineEvent)] = MachinePoint.all.flatMap { point in
        MachineEvent.allCases.compactMap { event in
            if case .traps = expected(event, from: point) { return nil }
            return (point, event)
        }
    }
    private static let impossible: [(MachinePoint, MachineEvent)] = MachinePoint.all.flatMap { point in
        MachineEvent.allCases.compactMap { event in
            if case .traps = expected(event, from: point) { return (point, event) }
            return nil
        }
    }

    @Test("every event from every point does what the table says", arguments: possible)
    func table(_ point: MachinePoint, _ event: MachineEvent) async throws {
        guard case .transition(let next, let transition) = expected(event, from: point) else { return }
        var machine = point.machine
        let actual = event.apply(to: &machine)
        #expect(actual == transition)
        #expect(machine.state == next.state)
        #expect(machine.isCancelled == next.isCancelled)
        if transition.action == .none {
            #expect(machine == point.machine, "an ignored event must change nothing")
        }
    }

    @Test("the table covers 182 combinations, 22 of them impossible")
    func coverage() {
        #expect(Self.possible.count + Self.impossible.count == MachineState.allCases.count * 2 * MachineEvent.allCases.count)
        #expect(Self.possible.count + Self.impossible.count == 182)
        #expect(Self.impossible.count == 22)
    }

    /// The events that cannot happen trap rather than corrupt the state (each in a child process).
    @Test("impossible events trap", arguments: impossible)
    func impossibleEventsTrap(_ point: MachinePoint, _ event: MachineEvent) async {
        let stateIndex: Int = MachineState.allCases.firstIndex(of: point.state) ?? 0
        let isCancelled: Bool = point.isCancelled
        let completed: Bool = event == .transferCompleted
        await #expect(processExitsWith: .failure) { [stateIndex = stateIndex as Int, isCancelled = isCancelled as Bool, completed = completed as Bool] in
            let state = Machine.State.allCases[stateIndex]
            var machine = Machine(state: state, isCancelled: isCancelled)
            _ = completed ? machine.transferCompleted(MachineEvent.outcome) : machine.resultProcessed(MachineEvent.processed)
        }
    }

    @Test("the getters Foundation reads")
    func getters() {
        for point in MachinePoint.all {
            let machine = point.machine
            #expect(machine.isExecuting == [.executing, .completing, .preparing, .waiting].contains(point.state))
            #expect(machine.isFinished == (point.state == .finished))
            #expect(machine.isPaused == (point.state == .paused))
        }
    }

    /// Random lives driven like the real operation drives the machine: each attempt's transfer
    /// completes only after it was started, exactly once, eventually when cancelled; its result is
    /// processed or its retry scheduled, once; a retry's wait ends, an attempt's preparation ends.
    /// Checks: at most one finish and it is last; `isFinished` posted once, after `isExecuting` when
    /// the operation executed, never by a cancel of a running transfer, never before `start`; a
    /// cancel before the finish always finishes with the cancellation; one transfer at a time.
    @Test("random sequences finish at most once, with posts in order", arguments: 0..<8)
    func randomSequences(_ seed: Int) {
        // One step past the seed: the draws these seeds have always made.
        var random = SplitMix64(seed: UInt64(seed) &+ SplitMix64.increment)
        for _ in 0..<2_000 {
            var machine = Machine()
            var transferStarted = false
            var transferCompleted = false
            var transfersStarted = 0
            var processing = false
            var finishes: [Machine.Finish] = []
            var posts: [Machine.Key] = []
            var started = false
            var cancelledBeforeFinish = false
            var executedEver = false

            for _ in 0..<random.next(upTo: 12) + 1 {
                var candidates: [MachineEvent] = [.startReady, .startNotReady, .startPreparing, .cancel, .pause, .resume]
                if transferStarted && !transferCompleted { candidates.append(.transferCompleted) }
                if processing { candidates += [.resultProcessed, .retryScheduled] }
                if machine.state == .waiting { candidates += [.retryDue, .retryDuePreparing] }
                if machine.state == .preparing { candidates += [.attemptPrepared, .preparationFailed] }
                let event = candidates[random.next(upTo: candidates.count)]
                let wasFinished = machine.isFinished
                let before = machine.state
                let transition = event.apply(to: &machine)
                if [.startReady, .startNotReady, .startPreparing].contains(event) { started = true }
                if event == .cancel && !wasFinished { cancelledBeforeFinish = true }
                if event == .cancel && before != .preparing && before != .waiting {
                    #expect(!transition.posts.contains(.isFinished), "cancel posted isFinished with a transfer to wait for")
                }
                if wasFinished { #expect(transition == .none, "an event after finishing did something") }
                if machine.isExecuting { executedEver = true }
                posts += transition.posts
                switch transition.action {
                case .startTransfer:
                    #expect(!transferStarted || transferCompleted, "a second transfer beside the first")
                    transferStarted = true
                    transferCompleted = false
                    transfersStarted += 1
                case .processResult:
                    transferCompleted = true
                    processing = true
                case .waitForRetry:
                    #expect(processing)
                    processing = false
                case .finish(let finish):
                    processing = false
                    finishes.append(finish)
                case .cancelPendingAttempt:
                    finishes.append(.withCancellation(nil))
                case .cancelTransfer, .pauseTransfer, .resumeTransfer:
                    #expect(transferStarted && !transferCompleted, "\(transition.action) without a running transfer")
                case .none, .markCancelled, .prepareAttempt:
                    break
                }
                if event == .transferCompleted { transferCompleted = true }
            }
            // Drive to the end the way the world would: a started, cancelled transfer completes; a
            // preparation or a wait is cancelled.
            if machine.state == .preparing || machine.state == .waiting {
                let last = machine.cancel()
                posts += last.posts
                cancelledBeforeFinish = true
                if case .cancelPendingAttempt = last.action { finishes.append(.withCancellation(nil)) }
            }
            if transferStarted && !transferCompleted {
                if !machine.isCancelled { posts += machine.cancel().posts; cancelledBeforeFinish = true }
                posts += machine.transferCompleted(MachineEvent.outcome).posts
                processing = true
            }
            if processing {
                let last = machine.resultProcessed(MachineEvent.processed)
                posts += last.posts
                if case .finish(let finish) = last.action { finishes.append(finish) }
            }

            #expect(finishes.count <= 1)
            #expect(posts.filter { $0 == .isFinished }.count == finishes.count)
            if !finishes.isEmpty {
                #expect(started)
                #expect(machine.isFinished)
                #expect(posts.last == .isFinished)
                if executedEver { #expect(Array(posts.suffix(2)) == [.isExecuting, .isFinished]) }
                switch finishes[0] {
                case .withCancellation: #expect(cancelledBeforeFinish, "finished as cancelled without a cancel")
                case .withResult(let result):
                    #expect(!cancelledBeforeFinish, "a cancel before the finish must win")
                    #expect(result == MachineEvent.processed || result == MachineEvent.preparationFailure,
                            "the processed result is the one delivered")
                }
            } else {
                #expect(!machine.isFinished)
                #expect(transfersStarted == 0, "a started transfer always finishes its operation")
            }
        }
    }
}
