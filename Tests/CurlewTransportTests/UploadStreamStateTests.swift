import Foundation
import Testing
@testable import CurlewTransport

/// Every event in every state of a streamed request body, without I/O: what the producer's writes,
/// its end or a failure return, and what curl's reads then get. The waiting producer is 7, a new
/// write's waiter 8.
@Suite("Upload stream state")
struct UploadStreamStateTests {
    typealias State = UploadStreamState<Int>
    typealias Read = State.ReadAction

    static let failure = TransferError(.requestBodyStreamExhausted, "the sequence threw")

    enum Situation: String, CaseIterable, CustomTestStringConvertible {
        /// Nothing written yet, curl not asking.
        case empty
        /// curl asked and found nothing: it is paused.
        case consumerPaused
        /// 40 bytes buffered (the limit is 100).
        case buffered
        /// 120 bytes buffered: the producer (7) waits.
        case full
        /// The producer ended with 40 bytes still buffered.
        case completeWithBytes
        /// The producer ended and curl read everything and the end.
        case drained
        /// The body failed with 40 bytes buffered.
        case failed

        var testDescription: String { self.rawValue }
    }

    /// `count` bytes counting up from `start`, so a lost, doubled or shifted byte shows.
    static func chunk(_ count: Int, from start: Int = 0) -> Data {
        Data((start..<(start + count)).map { UInt8(truncatingIfNeeded: $0) })
    }

    static func make(_ situation: Situation, length: Int64? = nil) -> State {
        var state = State(limit: 100, length: length)
        switch situation {
        case .empty:
            break
        case .consumerPaused:
            #expect(Self.action(&state, 16) == .pause)
        case .buffered:
            #expect(Wrote(state.write(Self.chunk(40), waiter: 7)) == .stored(resume: false))
        case .full:
            #expect(Wrote(state.write(Self.chunk(60), waiter: 7)) == .stored(resume: false))
            #expect(Wrote(state.write(Self.chunk(60, from: 60), waiter: 7)) == .wait(resume: false))
        case .completeWithBytes:
            _ = state.write(Self.chunk(40), waiter: 7)
            #expect(!Self.complete(&state))
        case .drained:
            _ = state.write(Self.chunk(40), waiter: 7)
            _ = state.complete()
            #expect(Self.action(&state, 100) == .copied(40, wakeProducer: false))
            #expect(Self.action(&state, 100) == .end)
        case .failed:
            _ = state.write(Self.chunk(40), waiter: 7)
            #expect(Failed(state.fail(Self.failure)) == Failed(waiter: nil, resumeConsumer: false))
        }
        return state
    }

    /// curl's read of up to `capacity` bytes: the action and the bytes copied.
    static func read(_ state: inout State, _ capacity: Int) -> (action: Read, bytes: [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let action = state.read(capacity: capacity) { chunk, range, position in
            for (index, byte) in chunk[(chunk.startIndex + range.lowerBound)..<(chunk.startIndex + range.upperBound)].enumerated() {
                buffer[position + index] = byte
            }
        }
        if case .copied(let count, _) = action { return (action, Array(buffer[..<count])) }
        return (action, [])
    }

    /// curl's read of up to `capacity` bytes: the action only.
    static func action(_ state: inout State, _ capacity: Int) -> Read {
        Self.read(&state, capacity).action
    }

    static func complete(_ state: inout State) -> Bool {
        state.complete()
    }

    static func takeWaiter(_ state: inout State) -> Int? {
        state.takeProducerWaiter()
    }

    /// Reads with `capacity` until something other than bytes comes: the bytes and that action.
    static func readAll(_ state: inout State, _ capacity: Int = 16) -> (bytes: [UInt8], last: Read) {
        var bytes: [UInt8] = []
        while true {
            let (action, copied) = Self.read(&state, capacity)
            guard case .copied = action else { return (bytes, action) }
            bytes += copied
        }
    }

    // MARK: Every event in every state

    /// The one producer writes only while not waiting, so `full` has no write (nor end) of its own.
    @Test("the producer writes", arguments: Situation.allCases.filter { $0 != .full })
    func write(_ situation: Situation) {
        var state = Self.make(situation)
        let got = Wrote(state.write(Self.chunk(10, from: 200), waiter: 8))
        switch situation {
        case .empty, .buffered:
            #expect(got == .stored(resume: false))
            #expect(state.buffered == (situation == .empty ? 10 : 50))
        case .consumerPaused:
            #expect(got == .stored(resume: true), "curl, paused for want of bytes, is resumed")
            #expect(!state.consumerPaused)
            #expect(Self.read(&state, 16).bytes == Array(Self.chunk(10, from: 200)))
        case .completeWithBytes, .drained, .failed:
            #expect(got == .stop, "the body is over: the producer stops")
        case .full:
            Issue.record("not an event of this state")
        }
    }

    @Test("the producer ends", arguments: Situation.allCases.filter { $0 != .full })
    func complete(_ situation: Situation) {
        var state = Self.make(situation)
        let resume = state.complete()
        #expect(resume == (situation == .consumerPaused), "only a paused curl is resumed, to read the end")
        let rest = Self.readAll(&state)
        switch situation {
        case .empty, .consumerPaused, .drained:
            #expect(rest.bytes.isEmpty)
            #expect(rest.last == .end)
        case .buffered, .completeWithBytes:
            #expect(rest.bytes == Array(Self.chunk(40)), "what was buffered comes before the end")
            #expect(rest.last == .end)
        case .failed:
            #expect(rest.last == .fail(Self.failure), "a failed body does not complete")
        case .full:
            Issue.record("not an event of this state")
        }
    }

    @Test("the body fails", arguments: Situation.allCases)
    func fail(_ situation: Situation) {
        var state = Self.make(situation)
        let failed = Failed(state.fail(TransferError(.cancelled, "the transfer ended")))
        switch situation {
        case .empty, .buffered, .completeWithBytes, .drained:
            #expect(failed == Failed(waiter: nil, resumeConsumer: false))
        case .consumerPaused:
            #expect(failed == Failed(waiter: nil, resumeConsumer: true), "a paused curl is resumed, to fail")
        case .full:
            #expect(failed == Failed(waiter: 7, resumeConsumer: false), "the waiting producer is released, to stop")
        case .failed:
            #expect(failed == Failed(waiter: nil, resumeConsumer: false))
        }
        #expect(state.buffered == 0, "nothing buffered is sent after a failure")
        let expected = situation == .failed ? Self.failure : TransferError(.cancelled, "the transfer ended")
        #expect(Self.action(&state, 16) == .fail(expected), "the first failure stands")
        #expect(Wrote(state.write(Self.chunk(1), waiter: 8)) == .stop)
    }

    @Test("curl reads", arguments: Situation.allCases)
    func read(_ situation: Situation) {
        var state = Self.make(situation)
        let (action, bytes) = Self.read(&state, 16)
        switch situation {
        case .empty, .consumerPaused:
            #expect(action == .pause)
            #expect(state.consumerPaused)
        case .buffered, .completeWithBytes:
            #expect(action == .copied(16, wakeProducer: false))
            #expect(bytes == Array(Self.chunk(16)))
            #expect(state.sent == 16)
        case .full:
            #expect(action == .copied(16, wakeProducer: false), "104 bytes left: still full")
            #expect(Self.action(&state, 16) == .copied(16, wakeProducer: true), "88 left: the producer goes on")
            #expect(Self.takeWaiter(&state) == 7)
            #expect(Self.takeWaiter(&state) == nil, "taken once")
        case .drained:
            #expect(action == .end)
        case .failed:
            #expect(action == .fail(Self.failure))
        }
        if situation != .full { #expect(Self.takeWaiter(&state) == nil, "no producer waits") }
    }

    // MARK: Reading

    @Test("reads cross chunk boundaries and keep the bytes in order")
    func crossesChunks() {
        var state = State(limit: 1000)
        var written: [UInt8] = []
        for (index, size) in [5, 1, 33, 7, 64].enumerated() {
            let chunk = Self.chunk(size, from: index * 50)
            written += chunk
            _ = state.write(chunk, waiter: 0)
        }
        _ = state.complete()
        var read: [UInt8] = []
        for capacity in [3, 10, 1, 40, 100] {
            read += Self.read(&state, capacity).bytes
        }
        #expect(read == written)
        #expect(state.sent == Int64(written.count))
        #expect(Self.action(&state, 10) == .end)
    }

    @Test("an empty chunk stores nothing")
    func emptyChunk() {
        var state = State(limit: 10)
        #expect(Wrote(state.write(Data(), waiter: 0)) == .stored(resume: false))
        #expect(state.buffered == 0)
        #expect(Self.action(&state, 10) == .pause)
    }

    // MARK: An announced length

    @Test("the last byte waits for the producer's end")
    func lastByteWaits() {
        var state = State(limit: 100, length: 10)
        #expect(Wrote(state.write(Self.chunk(10), waiter: 7)) == .stored(resume: false), "all announced bytes are here: go on")
        #expect(Self.action(&state, 64) == .copied(9, wakeProducer: false))
        #expect(Self.action(&state, 64) == .pause, "the last byte is held until the producer says it is done")
        #expect(Self.complete(&state), "curl is resumed")
        #expect(Self.action(&state, 64) == .copied(1, wakeProducer: false))
        #expect(Self.action(&state, 64) == .end)
    }

    @Test("a producer that goes on past the length fails the body, in one write or after curl had the rest")
    func pastTheLength() {
        var inOne = State(limit: 100, length: 10)
        #expect(Wrote(inOne.write(Self.chunk(12), waiter: 7)) == .wait(resume: false), "past the length: the producer waits for the failure")
        #expect(Self.action(&inOne, 64).code == .requestBodyFileChanged)
        #expect(Failed(inOne.fail(Self.failure)) == Failed(waiter: 7, resumeConsumer: false))

        var later = State(limit: 100, length: 10)
        _ = later.write(Self.chunk(10), waiter: 7)
        #expect(Self.action(&later, 64) == .copied(9, wakeProducer: false))
        #expect(Self.action(&later, 64) == .pause)
        #expect(Wrote(later.write(Self.chunk(1), waiter: 8)) == .wait(resume: true))
        #expect(Self.action(&later, 64).code == .requestBodyFileChanged, "curl never got the tenth byte")
        #expect(later.sent == 9)
    }

    @Test("a producer that ends short fails the body")
    func shortOfTheLength() {
        var state = State(limit: 100, length: 10)
        _ = state.write(Self.chunk(6), waiter: 7)
        #expect(Self.action(&state, 64) == .copied(6, wakeProducer: false))
        #expect(Self.action(&state, 64) == .pause)
        #expect(Self.complete(&state))
        #expect(Self.action(&state, 64).code == .requestBodyFileChanged)
    }

    @Test("a length of 0 sends nothing and waits for the end; with a buffer of one byte the producer is never stuck")
    func edges() {
        var empty = State(limit: 100, length: 0)
        #expect(Self.action(&empty, 64) == .pause)
        #expect(Self.complete(&empty))
        #expect(Self.action(&empty, 64) == .end)

        var tiny = State(limit: 1, length: 3)
        #expect(Wrote(tiny.write(Self.chunk(1), waiter: 7)) == .wait(resume: false))
        #expect(Self.action(&tiny, 64) == .copied(1, wakeProducer: true))
        #expect(Self.takeWaiter(&tiny) == 7)
        #expect(Wrote(tiny.write(Self.chunk(2, from: 1), waiter: 7)) == .stored(resume: false), "the whole length is here")
        #expect(Self.action(&tiny, 64) == .copied(1, wakeProducer: false))
        #expect(Self.action(&tiny, 64) == .pause)
        #expect(Self.complete(&tiny))
        #expect(Self.action(&tiny, 64) == .copied(1, wakeProducer: false))
        #expect(Self.action(&tiny, 64) == .end)
    }

    @Test("a limit below 1 is 1")
    func minimumLimit() {
        #expect(State(limit: 0).limit == 1)
    }

    @Test("a producer that stays ahead of curl leaves the state holding at most the limit and the chunk being read")
    func sentChunksAreReleased() {
        var state = State(limit: 100)
        _ = state.write(Self.chunk(90), waiter: 7)
        var most = 0
        for round in 0..<10_000 {
            // The producer writes before curl reads: the buffer never empties.
            _ = state.write(Self.chunk(10, from: round), waiter: 8)
            _ = state.takeProducerWaiter()
            #expect(Self.action(&state, 10) == .copied(10, wakeProducer: false))
            most = max(most, state.retainedByteCount)
        }
        #expect(most <= 100 + 90, "the state held \(most) bytes for a 100-byte buffer and chunks of at most 90")
    }
}

/// A ``UploadStreamState/WriteAction`` in a form tests compare.
private enum Wrote: Equatable {
    case stored(resume: Bool)
    case wait(resume: Bool)
    case stop

    init(_ action: UploadStreamState<Int>.WriteAction) {
        switch action {
        case .stored(let resume): self = .stored(resume: resume)
        case .wait(let resume): self = .wait(resume: resume)
        case .stop: self = .stop
        }
    }

}

/// What ``UploadStreamState/fail(_:)`` returns, in a form tests compare.
private struct Failed: Equatable {
    var waiter: Int?
    var resumeConsumer: Bool

    init(waiter: Int?, resumeConsumer: Bool) {
        self.waiter = waiter
        self.resumeConsumer = resumeConsumer
    }

    init(_ failed: (waiter: Int?, resumeConsumer: Bool)) {
        self.init(waiter: failed.waiter, resumeConsumer: failed.resumeConsumer)
    }
}

extension UploadStreamState.ReadAction {
    /// The error code of a failure.
    var code: TransferError.Code? {
        if case .fail(let error) = self { return error.code }
        return nil
    }

}
