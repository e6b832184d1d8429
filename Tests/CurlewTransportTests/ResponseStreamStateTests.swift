import Foundation
import HTTPTypes
import Testing
@testable import CurlewTransport

/// Every event in every state of a streamed response body, without I/O: what each returns, and what
/// the consumer then gets. Waiters are plain numbers: the head waiter is 1, the body waiter 2, a
/// second consumer's 9.
@Suite("Response stream state")
struct ResponseStreamStateTests {
    typealias State = ResponseStreamState<Int, Int>

    static let limit = 100
    static let url = URL(fileURLWithPath: "/stream")
    static let failure = TransferError(.networkConnectionLost, "the connection broke")
    static let cancellation = TransferError(.cancelled, "cancelled")

    /// The states a stream goes through, each reached through legal events.
    enum Situation: String, CaseIterable, CustomTestStringConvertible {
        /// No head yet, nothing buffered.
        case fresh
        /// The consumer waits for the head.
        case headWaiting
        /// Head arrived, nothing buffered, nobody waiting.
        case open
        /// The consumer waits for a chunk.
        case bodyWaiting
        /// 40 bytes buffered (under the limit).
        case buffering
        /// 120 bytes buffered and a chunk refused: the producer is paused.
        case full
        /// Complete, with 40 bytes still buffered.
        case endedWithChunks
        /// Failed, with 40 bytes still buffered.
        case failedWithChunks
        /// Complete and drained.
        case ended
        /// Failed and drained.
        case failed
        /// Failed before any head came.
        case failedBeforeHead
        /// The consumer cancelled with 40 bytes buffered.
        case cancelled

        var testDescription: String { self.rawValue }

        var hasHead: Bool {
            switch self {
            case .fresh, .headWaiting, .failedBeforeHead: false
            default: true
            }
        }

        /// The end the state already has: `nil` while running; `.some(nil)` complete.
        var end: TransferError.Code?? {
            switch self {
            case .fresh, .headWaiting, .open, .bodyWaiting, .buffering, .full: nil
            case .endedWithChunks, .ended: .some(nil)
            case .failedWithChunks, .failed, .failedBeforeHead: .some(.networkConnectionLost)
            case .cancelled: .some(.cancelled)
            }
        }

        /// Bytes buffered.
        var buffered: Int {
            switch self {
            case .buffering, .endedWithChunks, .failedWithChunks: 40
            case .full: 120
            default: 0
            }
        }
    }

    static func head(_ code: Int = 200) -> HTTPResponse {
        HTTPResponse(status: HTTPResponse.Status(code: code))
    }

    static func chunk(_ count: Int, _ byte: UInt8 = 7) -> Data {
        Data(repeating: byte, count: count)
    }

    static func make(_ situation: Situation) -> State {
        var state = State(limit: Self.limit)
        func receiveHead() { #expect(state.receiveHead(Self.head(), url: Self.url) == nil) }
        func store(_ count: Int) { #expect(Got(state.offer(Self.chunk(count))) == .stored) }
        switch situation {
        case .fresh:
            break
        case .headWaiting:
            #expect(Got(state.awaitHead(1)) == .wait)
        case .open:
            receiveHead()
        case .bodyWaiting:
            receiveHead()
            #expect(Got(state.next(2)) == .wait)
        case .buffering:
            receiveHead()
            store(40)
        case .full:
            receiveHead()
            store(60)
            store(60)
            #expect(Got(state.offer(Self.chunk(10))) == .pause)
        case .endedWithChunks:
            receiveHead()
            store(40)
            #expect(Outcome(state.finish(nil)) == Outcome())
        case .failedWithChunks:
            receiveHead()
            store(40)
            #expect(Outcome(state.finish(Self.failure)) == Outcome(end: .networkConnectionLost))
        case .ended:
            receiveHead()
            _ = state.finish(nil)
        case .failed:
            receiveHead()
            _ = state.finish(Self.failure)
        case .failedBeforeHead:
            _ = state.finish(Self.failure)
        case .cancelled:
            receiveHead()
            store(40)
            _ = state.cancel(Self.cancellation)
        }
        #expect(state.buffered == situation.buffered, "\(situation)")
        #expect(state.end.map { $0?.code } == situation.end, "\(situation)")
        return state
    }

    /// What the consumer reads from `state` until the end, the error or a wait.
    private static func drain(_ state: inout State) -> [Got] {
        var got: [Got] = []
        while true {
            let next = Got(state.next(5))
            got.append(next)
            guard case .chunk = next else { return got }
        }
    }

    // MARK: Every event in every state

    @Test("the head arrives", arguments: Situation.allCases)
    func receiveHead(_ situation: Situation) {
        var state = Self.make(situation)
        let waiter = state.receiveHead(Self.head(404), url: Self.url)
        #expect(waiter == (situation == .headWaiting ? 1 : nil), "only a waiting consumer is woken")
        let head = Got(state.awaitHead(9))
        switch situation {
        case .fresh, .headWaiting:
            #expect(head == .head(404))
        case .failedBeforeHead:
            #expect(head == .fail(.networkConnectionLost), "a head after the end is ignored")
        default:
            #expect(head == .head(200), "a second head (a resumed transfer's) is ignored")
        }
    }

    @Test("the producer offers a chunk", arguments: Situation.allCases)
    func offer(_ situation: Situation) {
        var state = Self.make(situation)
        let got = Got(state.offer(Self.chunk(10)))
        switch situation {
        case .fresh, .headWaiting, .open:
            #expect(got == .stored)
            #expect(state.buffered == 10)
        case .bodyWaiting:
            #expect(got == .deliver(10, to: 2), "a waiting consumer gets the chunk straight away")
            #expect(state.buffered == 0)
            #expect(Got(state.next(5)) == .wait, "the waiter was handed the chunk: nobody waits twice")
        case .buffering:
            #expect(got == .stored)
            #expect(state.buffered == 50)
        case .full:
            #expect(got == .pause, "the buffer is still full")
            #expect(state.buffered == 120, "a refused chunk is not kept")
            #expect(state.producerPaused)
        case .endedWithChunks, .failedWithChunks, .ended, .failed, .failedBeforeHead, .cancelled:
            #expect(got == .discard, "nobody reads after the end")
            #expect(state.buffered == situation.buffered)
        }
    }

    @Test("the producer finishes complete", arguments: Situation.allCases)
    func finishComplete(_ situation: Situation) {
        var state = Self.make(situation)
        let release = Outcome(state.finish(nil))
        #expect(state.end.map { $0?.code } == (situation.end ?? .some(nil)), "the first end stands")
        switch situation {
        case .fresh:
            #expect(release == Outcome())
            #expect(Got(state.awaitHead(9)) == .fail(.badServerResponse), "a complete body without a head is not a response")
        case .headWaiting:
            #expect(release == Outcome(headWaiter: 1))
        case .open, .buffering:
            #expect(release == Outcome())
            #expect(Self.drain(&state) == (situation == .buffering ? [.chunk(40, resume: false), .end] : [.end]))
        case .bodyWaiting:
            #expect(release == Outcome(bodyWaiter: 2), "the waiting consumer learns of the end")
        case .full:
            #expect(release == Outcome())
            #expect(!state.producerPaused, "a finished producer is not resumed")
            #expect(Self.drain(&state) == [.chunk(60, resume: false), .chunk(60, resume: false), .end])
        case .endedWithChunks, .failedWithChunks, .ended, .failed, .failedBeforeHead, .cancelled:
            #expect(release == Outcome(), "nothing left to release")
        }
    }

    @Test("the producer fails", arguments: Situation.allCases)
    func finishFailed(_ situation: Situation) {
        var state = Self.make(situation)
        let release = Outcome(state.finish(Self.failure))
        switch situation {
        case .fresh:
            #expect(release == Outcome(end: .networkConnectionLost))
            #expect(Got(state.awaitHead(9)) == .fail(.networkConnectionLost))
        case .headWaiting:
            #expect(release == Outcome(headWaiter: 1, end: .networkConnectionLost))
        case .open:
            #expect(release == Outcome(end: .networkConnectionLost))
            #expect(Self.drain(&state) == [.fail(.networkConnectionLost)])
        case .bodyWaiting:
            #expect(release == Outcome(bodyWaiter: 2, end: .networkConnectionLost))
        case .buffering:
            #expect(release == Outcome(end: .networkConnectionLost))
            #expect(Self.drain(&state) == [.chunk(40, resume: false), .fail(.networkConnectionLost)],
                    "the bytes that arrived come before the error")
        case .full:
            #expect(release == Outcome(end: .networkConnectionLost))
            #expect(Self.drain(&state) == [.chunk(60, resume: false), .chunk(60, resume: false), .fail(.networkConnectionLost)])
        case .endedWithChunks, .failedWithChunks, .ended, .failed, .failedBeforeHead, .cancelled:
            #expect(release == Outcome())
            #expect(state.end.map { $0?.code } == situation.end, "the first end stands")
        }
    }

    @Test("the consumer asks for the head", arguments: Situation.allCases)
    func awaitHead(_ situation: Situation) {
        var state = Self.make(situation)
        let got = Got(state.awaitHead(9))
        switch situation {
        case .fresh:
            #expect(got == .wait)
            #expect(state.receiveHead(Self.head(), url: Self.url) == 9)
        case .headWaiting:
            #expect(got == .fail(.invalidRequest), "a second consumer waiting at once is refused, not left hanging")
            #expect(state.receiveHead(Self.head(), url: Self.url) == 1, "the first one still gets the head")
        case .failedBeforeHead:
            #expect(got == .fail(.networkConnectionLost))
        default:
            #expect(got == .head(200))
        }
    }

    @Test("the consumer asks for the next chunk", arguments: Situation.allCases)
    func next(_ situation: Situation) {
        var state = Self.make(situation)
        let got = Self.drain(&state)
        switch situation {
        case .fresh, .headWaiting, .open:
            #expect(got == [.wait])
            #expect(Got(state.offer(Self.chunk(3))) == .deliver(3, to: 5))
        case .bodyWaiting:
            #expect(got == [.fail(.invalidRequest)], "a second consumer waiting at once is refused, not left hanging")
            #expect(Got(state.offer(Self.chunk(3))) == .deliver(3, to: 2), "the first one still gets the chunk")
        case .buffering:
            #expect(got == [.chunk(40, resume: false), .wait])
        case .full:
            #expect(got == [.chunk(60, resume: false), .chunk(60, resume: true), .wait],
                    "the paused producer is resumed once the buffer is down to half")
            #expect(!state.producerPaused)
        case .endedWithChunks:
            #expect(got == [.chunk(40, resume: false), .end])
        case .failedWithChunks:
            #expect(got == [.chunk(40, resume: false), .fail(.networkConnectionLost)])
        case .ended:
            #expect(got == [.end])
        case .failed, .failedBeforeHead:
            #expect(got == [.fail(.networkConnectionLost)])
        case .cancelled:
            #expect(got == [.fail(.cancelled)])
        }
    }

    @Test("the consumer takes what is ready without waiting", arguments: Situation.allCases)
    func takeReady(_ situation: Situation) {
        var state = Self.make(situation)
        var taken = Self.make(situation)
        // Taking what is ready answers what `next` answers, except that it never keeps a waiter.
        var got: [Got] = []
        while let action = taken.takeReady() {
            got.append(Got(action))
            guard case .chunk = got.last else { break }
        }
        var expected = Self.drain(&state)
        if expected.last == .wait || (situation == .bodyWaiting && expected.last == .fail(.invalidRequest)) {
            expected.removeLast()
        }
        #expect(got == expected, "\(situation)")
        if situation.end == nil, situation != .bodyWaiting {
            #expect(Got(taken.offer(Self.chunk(3))) == .stored, "no waiter was kept: a chunk is buffered, not delivered")
        }
    }

    @Test("the consumer cancels", arguments: Situation.allCases)
    func cancel(_ situation: Situation) {
        var state = Self.make(situation)
        let release = Outcome(state.cancel(Self.cancellation))
        #expect(state.buffered == 0, "what was buffered is dropped")
        switch situation {
        case .fresh, .open, .buffering:
            #expect(release == Outcome(end: .cancelled, cancelProducer: true))
        case .full:
            #expect(release == Outcome(end: .cancelled, cancelProducer: true))
            #expect(!state.producerPaused, "a cancelled producer is not resumed")
        case .headWaiting:
            #expect(release == Outcome(headWaiter: 1, end: .cancelled, cancelProducer: true))
        case .bodyWaiting:
            #expect(release == Outcome(bodyWaiter: 2, end: .cancelled, cancelProducer: true))
        case .endedWithChunks, .failedWithChunks, .ended, .failed, .failedBeforeHead, .cancelled:
            #expect(release == Outcome(), "the producer is done: nothing to cancel")
        }
        let after = Self.drain(&state)
        switch situation {
        case .ended:
            #expect(after == [.end], "nothing was lost: the body stays complete")
        case .failed, .failedBeforeHead:
            #expect(after == [.fail(.networkConnectionLost)])
        default:
            // Bytes were dropped, or the body was still running: the consumer must not mistake what
            // it read for the whole body.
            #expect(after == [.fail(.cancelled)])
        }
    }

    // MARK: Backpressure

    @Test("pauses at the limit and resumes once drained to half, once")
    func pauseAndResume() {
        var state = State(limit: 100)
        _ = state.receiveHead(Self.head(), url: Self.url)
        for _ in 0..<4 { #expect(Got(state.offer(Self.chunk(30))) == .stored) }  // 120: full
        #expect(Got(state.offer(Self.chunk(30))) == .pause)
        #expect(Got(state.offer(Self.chunk(30))) == .pause, "offered again before a resume: still refused")
        #expect(Got(state.next(5)) == .chunk(30, resume: false))  // 90
        #expect(Got(state.next(5)) == .chunk(30, resume: false))  // 60
        #expect(Got(state.next(5)) == .chunk(30, resume: true))  // 30: half or less
        #expect(Got(state.next(5)) == .chunk(30, resume: false), "resumed once")
        #expect(Got(state.offer(Self.chunk(30))) == .stored)
    }

    @Test("holds at most the limit plus one chunk however far the consumer falls behind")
    func bounded() {
        var state = State(limit: 1000)
        var refused = 0
        for _ in 0..<10_000 where Got(state.offer(Self.chunk(300))) == .pause {
            refused += 1
        }
        #expect(state.buffered <= 1000 + 300)
        #expect(refused == 10_000 - 4)
    }

    @Test("chunks come out in the order they went in, across many compactions")
    func order() {
        var state = State(limit: 50)
        _ = state.receiveHead(Self.head(), url: Self.url)
        var expected: [UInt8] = []
        var read: [UInt8] = []
        var byte: UInt8 = 0
        for round in 0..<200 {
            for _ in 0..<(round % 4) {
                let chunk = Self.chunk(10, byte)
                if Got(state.offer(chunk)) == .stored { expected.append(byte) }
                byte &+= 1
            }
            for _ in 0..<(round % 3) {
                if case .chunk(let data, _) = state.next(5) { read.append(data.first ?? 0) }
            }
        }
        _ = state.finish(nil)
        while case .chunk(let data, _) = state.next(5) { read.append(data.first ?? 0) }
        #expect(read == expected)
    }

    @Test("a limit below 1 is 1")
    func minimumLimit() {
        #expect(State(limit: 0).limit == 1)
        #expect(State(limit: -5).limit == 1)
    }
}

/// An action of ``ResponseStreamState`` in a form tests compare.
private enum Got: Equatable, CustomStringConvertible {
    case head(Int)
    case chunk(Int, resume: Bool)
    case stored
    case deliver(Int, to: Int)
    case pause
    case discard
    case end
    case fail(TransferError.Code)
    case wait

    init(_ action: ResponseStreamState<Int, Int>.HeadAction) {
        switch action {
        case .head(let response, _): self = .head(response.status.code)
        case .fail(let error): self = .fail(error.code)
        case .wait: self = .wait
        }
    }

    init(_ action: ResponseStreamState<Int, Int>.NextAction) {
        switch action {
        case .chunk(let data, let resume): self = .chunk(data.count, resume: resume)
        case .end: self = .end
        case .fail(let error): self = .fail(error.code)
        case .wait: self = .wait
        }
    }

    init(_ action: ResponseStreamState<Int, Int>.OfferAction) {
        switch action {
        case .stored: self = .stored
        case .deliver(let data, let waiter): self = .deliver(data.count, to: waiter)
        case .pause: self = .pause
        case .discard: self = .discard
        }
    }

    var description: String {
        switch self {
        case .head(let code): "head(\(code))"
        case .chunk(let count, let resume): "chunk(\(count)\(resume ? ", resume" : ""))"
        case .stored: "stored"
        case .deliver(let count, let waiter): "deliver(\(count) to \(waiter))"
        case .pause: "pause"
        case .discard: "discard"
        case .end: "end"
        case .fail(let code): "fail(\(code))"
        case .wait: "wait"
        }
    }
}

/// A ``ResponseStreamState/Release`` in a form tests compare (a complete end and no end release
/// the same: the state's ``ResponseStreamState/end`` tells them apart).
private struct Outcome: Equatable {
    var headWaiter: Int?
    var bodyWaiter: Int?
    /// The error to end with; `nil` for a complete end, or nothing to end.
    var end: TransferError.Code?
    var cancelProducer = false

    init(headWaiter: Int? = nil, bodyWaiter: Int? = nil, end: TransferError.Code? = nil, cancelProducer: Bool = false) {
        self.headWaiter = headWaiter
        self.bodyWaiter = bodyWaiter
        self.end = end
        self.cancelProducer = cancelProducer
    }

    init(_ release: ResponseStreamState<Int, Int>.Release) {
        self.init(headWaiter: release.headWaiter, bodyWaiter: release.bodyWaiter, end: release.end?.code,
                  cancelProducer: release.cancelProducer)
    }
}
