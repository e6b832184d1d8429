import Testing
@testable import CurlewTransport

/// Every event in every state, without I/O: the table that guarantees one completion per transfer.
@Suite("Transfer state machine")
struct TransferStateMachineTests {
    typealias State = TransferStateMachine.State
    typealias Action = TransferStateMachine.Action

    enum Event: String, CaseIterable, CustomTestStringConvertible {
        case start, pause, resume, cancel, complete
        var testDescription: String { self.rawValue }

        func apply(to machine: inout TransferStateMachine) -> Action {
            switch self {
            case .start: return machine.start()
            case .pause: return machine.pause()
            case .resume: return machine.resume()
            case .cancel: return machine.cancel()
            case .complete: return machine.complete()
            }
        }
    }

    /// Drives a fresh machine into `state` through legal events.
    static func machine(in state: State) -> TransferStateMachine {
        var machine = TransferStateMachine()
        switch state {
        case .idle: break
        case .running: _ = machine.start()
        case .paused: _ = machine.start(); _ = machine.pause()
        case .finished: _ = machine.cancel()
        }
        #expect(machine.state == state)
        return machine
    }

    static let running = State.running(.awaitingHead)
    static let paused = State.paused(wasDraining: false)

    /// The whole transition table: (state, event) → (action, next state).
    static let table: [State: [Event: (Action, State)]] = [
        .idle: [.start: (.activate, running), .pause: (.none, .idle), .resume: (.none, .idle),
                .cancel: (.finish, .finished), .complete: (.none, .idle)],
        running: [.start: (.none, running), .pause: (.deactivate, paused), .resume: (.none, running),
                  .cancel: (.finish, .finished), .complete: (.finish, .finished)],
        paused: [.start: (.none, paused), .pause: (.none, paused), .resume: (.activate, running),
                 .cancel: (.finish, .finished), .complete: (.none, paused)],
        .finished: [.start: (.none, .finished), .pause: (.none, .finished), .resume: (.none, .finished),
                    .cancel: (.none, .finished), .complete: (.none, .finished)],
    ]

    @Test("every event in every state", arguments: [State.idle, running, paused, .finished], Event.allCases)
    func transition(from state: State, event: Event) throws {
        var machine = Self.machine(in: state)
        let expected = try #require(Self.table[state]?[event])
        #expect(event.apply(to: &machine) == expected.0)
        #expect(machine.state == expected.1)
    }

    @Test("any sequence of events finishes at most once")
    func finishesAtMostOnce() {
        // All sequences of length 6 over the five events: 15,625 runs.
        let events = Event.allCases
        var sequence = [Int](repeating: 0, count: 6)
        repeat {
            var machine = TransferStateMachine()
            var finishes = 0
            for index in sequence where events[index].apply(to: &machine) == .finish {
                finishes += 1
            }
            #expect(finishes <= 1)
            #expect((finishes == 1) == (machine.state == .finished))
        } while Self.advance(&sequence, base: events.count)
    }

    private static func advance(_ digits: inout [Int], base: Int) -> Bool {
        for position in digits.indices {
            digits[position] += 1
            if digits[position] < base { return true }
            digits[position] = 0
        }
        return false
    }

    // MARK: The running attempt's phase

    private static let boom = TransferError(.responseTooLarge, "boom")
    private static let cancelled = TransferError.cancelled(url: nil)
    private static let next = Attempt(
        target: try! RequestTarget(validating: "http://a.test/next"), method: .get, headerFields: [:],
        sendsBody: false, redirectCount: 1, resume: nil)

    private static func running(_ phase: TransferStateMachine.Phase) -> TransferStateMachine {
        var machine = TransferStateMachine()
        _ = machine.start()
        switch phase {
        case .awaitingHead: break
        case .delivering: _ = machine.headArrived(.deliver)
        case .skipping(let count): _ = machine.headArrived(.skip(count))
        case .draining(let then): _ = machine.headArrived(.drain(then: then))
        case .pausing: machine.haltRequested(cancellingWith: nil)
        case .aborting(let error): machine.failed(error)
        }
        #expect(machine.phase == phase)
        return machine
    }

    @Test("a head's plan sets the phase; a failing plan aborts")
    func headPlans() {
        var machine = Self.running(.awaitingHead)
        let r1 = machine.headArrived(.skip(10))
        #expect(r1)
        #expect(machine.phase == .skipping(10))
        machine.attemptStarted()
        #expect(machine.phase == .awaitingHead, "each attempt starts again waiting for its head")
        let r2 = machine.headArrived(.skip(0))
        #expect(r2)
        #expect(machine.phase == .delivering, "nothing to skip")
        let r3 = machine.headArrived(.fail(Self.boom))
        #expect(!r3)
        #expect(machine.abortError == Self.boom && !machine.wantsHead)
        let r4 = machine.headArrived(.deliver)
        #expect(!r4, "an aborting attempt wants no head")

        var pausing = Self.running(.pausing)
        let r5 = pausing.headArrived(.deliver)
        #expect(r5 && pausing.phase == .pausing, "a pause in progress stays")
    }

    @Test("skipping drops exactly the bytes already kept, across chunks")
    func skipping() {
        var machine = Self.running(.skipping(100))
        let r6 = machine.bodyArrived(count: 60)
        #expect(r6 == .drop)
        #expect(machine.phase == .skipping(40))
        let r7 = machine.bodyArrived(count: 50)
        #expect(r7 == .deliver(from: 40))
        #expect(machine.phase == .delivering)
        var exact = Self.running(.skipping(10))
        let r8 = exact.bodyArrived(count: 10)
        #expect(r8 == .drop)
        #expect(exact.phase == .delivering)
        let r9 = exact.bodyArrived(count: 5)
        #expect(r9 == .deliver(from: 0))
    }

    @Test("what each phase does with body bytes and request bytes")
    func bodyActions() {
        #expect(Self.running(.awaitingHead).sendsBody)
        var draining = Self.running(.draining(then: .retryWithoutRange))
        let r10 = draining.bodyArrived(count: 10)
        #expect(r10 == .drop)
        var pausing = Self.running(.pausing)
        let r11 = pausing.bodyArrived(count: 10)
        #expect(r11 == .pause)
        var aborting = Self.running(.aborting(Self.boom))
        let r12 = aborting.bodyArrived(count: 10)
        #expect(r12 == .abort)
        #expect(!aborting.sendsBody)
        var idle = TransferStateMachine()
        let r13 = idle.bodyArrived(count: 1)
        #expect(r13 == .abort, "no body outside a running attempt")
    }

    @Test("a cancel on the context beats a pause; an abort keeps its first error")
    func halts() {
        var machine = Self.running(.delivering)
        #expect(!machine.isHalting)
        machine.haltRequested(cancellingWith: nil)
        #expect(machine.phase == .pausing)
        #expect(machine.isHalting)
        machine.haltRequested(cancellingWith: Self.cancelled)
        #expect(machine.abortError == Self.cancelled)
        #expect(machine.isHalting)
        machine.haltRequested(cancellingWith: nil)
        machine.failed(Self.boom)
        #expect(machine.abortError == Self.cancelled, "the first error wins")
        var paused = TransferStateMachine()
        paused.haltRequested(cancellingWith: Self.cancelled)
        #expect(paused.state == .idle, "only a running transfer halts")
        #expect(!paused.isHalting)
    }

    @Test("the end of an attempt: drained responses lead on; an abort wins even over curl's success")
    func attemptEnds() {
        let redirect = Self.running(.draining(then: .redirect(Self.next)))
        #expect(redirect.attemptEnded(succeeded: true) == .relaunch(Self.next))
        #expect(redirect.attemptEnded(succeeded: false) == .failWithCurlError)
        #expect(Self.running(.draining(then: .retryWithoutRange)).attemptEnded(succeeded: true) == .retryWithoutRange)
        #expect(Self.running(.delivering).attemptEnded(succeeded: true) == .succeed)
        #expect(Self.running(.pausing).attemptEnded(succeeded: true) == .succeed, "the body ended before the pause took")
        #expect(Self.running(.delivering).attemptEnded(succeeded: false) == .failWithCurlError)
        #expect(Self.running(.aborting(Self.cancelled)).attemptEnded(succeeded: true) == .fail(Self.cancelled))
        #expect(Self.running(.aborting(Self.boom)).attemptEnded(succeeded: false) == .fail(Self.boom))
    }

    @Test("a pause while draining resumes that request from the start")
    func pauseWhileDraining() {
        var machine = Self.running(.draining(then: .retryWithoutRange))
        let r14 = machine.pause()
        #expect(r14 == .deactivate)
        #expect(machine.state == .paused(wasDraining: true))
        let r15 = machine.resume()
        #expect(r15 == .activate)
        #expect(machine.phase == .awaitingHead)
    }
}
