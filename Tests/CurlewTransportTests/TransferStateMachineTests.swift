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

    /// The whole transition table: (state, event) → (action, next state).
    static let table: [State: [Event: (Action, State)]] = [
        .idle: [.start: (.activate, .running), .pause: (.none, .idle), .resume: (.none, .idle),
                .cancel: (.finish, .finished), .complete: (.none, .idle)],
        .running: [.start: (.none, .running), .pause: (.deactivate, .paused), .resume: (.none, .running),
                   .cancel: (.finish, .finished), .complete: (.finish, .finished)],
        .paused: [.start: (.none, .paused), .pause: (.none, .paused), .resume: (.activate, .running),
                  .cancel: (.finish, .finished), .complete: (.none, .paused)],
        .finished: [.start: (.none, .finished), .pause: (.none, .finished), .resume: (.none, .finished),
                    .cancel: (.none, .finished), .complete: (.none, .finished)],
    ]

    @Test("every event in every state", arguments: [State.idle, .running, .paused, .finished], Event.allCases)
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
}
