import Foundation
import HTTPTypes

/// Where a streamed response body stands between its producer (a transfer, on the engine's context)
/// and its one consumer (a task iterating the body), as a value with no I/O.
///
/// ```
///   producer: head ─▶ chunk … chunk ─▶ finish(error?)          consumer: head() ─▶ next() … next()
///                        │                                                   │
///                        └── buffer ≥ limit: pause ◀──── drained to limit/2: resume
///   consumer: cancel ─▶ everything buffered dropped, the producer told to stop
/// ```
///
/// Each event returns what the caller must do once the lock it is kept under is released: resume a
/// waiting consumer, resume or cancel the producer. `HeadWaiter` and `BodyWaiter` are the consumer's
/// continuations (plain values in tests). The buffer holds at most `limit` bytes plus one chunk: a chunk that finds the
/// buffer full is refused (the producer pauses and offers it again once resumed), so memory stays
/// bounded however far the consumer falls behind.
struct ResponseStreamState<HeadWaiter: Sendable, BodyWaiter: Sendable>: Sendable {
    /// What waits for the head.
    enum HeadAction {
        /// The head is here.
        case head(HTTPResponse, URL)
        /// The body ended before a head came, with this error.
        case fail(TransferError)
        /// Not yet: the waiter was kept.
        case wait
    }

    /// What a consumer's `next()` gets.
    enum NextAction {
        /// A chunk; and whether the producer must be told to go on (it paused on a full buffer,
        /// which is now drained to half).
        case chunk(Data, resumeProducer: Bool)
        /// The body ended.
        case end
        /// The body failed (or was cancelled) with this error.
        case fail(TransferError)
        /// Nothing yet: the waiter was kept.
        case wait
    }

    /// What the producer does with a chunk.
    enum OfferAction {
        /// Kept in the buffer.
        case stored
        /// Handed straight to the waiting consumer.
        case deliver(Data, to: BodyWaiter)
        /// Refused: the buffer is full. The producer pauses and offers it again when resumed.
        case pause
        /// Dropped: nobody will read it (the consumer cancelled, or the body ended).
        case discard
    }

    /// What the end of the body (or a cancel) releases.
    struct Release {
        /// The head waiter, to fail with ``end`` (only when no head came).
        var headWaiter: HeadWaiter?
        /// The consumer waiting for a chunk, to end or fail with ``end``.
        var bodyWaiter: BodyWaiter?
        /// How the body ended: `nil` complete, else the error.
        var end: TransferError?
        /// Whether the producer must be cancelled (a cancel while it still runs).
        var cancelProducer = false
    }

    /// The most bytes buffered before the producer is paused.
    let limit: Int
    private(set) var head: (response: HTTPResponse, url: URL)?
    private var chunks: [Data] = []
    /// The first chunk of ``chunks`` not yet taken (the array is compacted when it empties).
    private var first = 0
    /// Bytes in the buffer.
    private(set) var buffered = 0
    /// `nil` while the body runs; the error it ended with (`.some(nil)`: complete).
    private(set) var end: TransferError??
    /// Whether the producer was refused and waits to be resumed.
    private(set) var producerPaused = false
    private var headWaiter: HeadWaiter?
    private var bodyWaiter: BodyWaiter?

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    // MARK: Producer

    /// The response head arrived. A head after the first (a resumed transfer) is ignored.
    mutating func receiveHead(_ response: HTTPResponse, url: URL) -> HeadWaiter? {
        guard self.head == nil, self.end == nil else { return nil }
        self.head = (response, url)
        defer { self.headWaiter = nil }
        return self.headWaiter
    }

    /// The producer has `chunk`.
    mutating func offer(_ chunk: Data) -> OfferAction {
        guard self.end == nil else { return .discard }
        if let waiter = self.bodyWaiter {
            self.bodyWaiter = nil
            return .deliver(chunk, to: waiter)
        }
        guard self.buffered < self.limit else {
            self.producerPaused = true
            return .pause
        }
        self.chunks.append(chunk)
        self.buffered += chunk.count
        return .stored
    }

    /// The producer finished: complete (`nil`) or with `error`. What was buffered is still read.
    mutating func finish(_ error: TransferError?) -> Release {
        guard self.end == nil else { return Release() }
        self.end = .some(error)
        self.producerPaused = false
        var release = Release(end: error)
        if self.head == nil {
            release.headWaiter = self.headWaiter
            self.headWaiter = nil
        }
        release.bodyWaiter = self.bodyWaiter  // only waiting when nothing is buffered
        self.bodyWaiter = nil
        return release
    }

    // MARK: Consumer

    /// The consumer asks for the head. A second consumer waiting at the same time is refused (it
    /// would otherwise take the first one's place and leave it waiting forever).
    mutating func awaitHead(_ waiter: HeadWaiter) -> HeadAction {
        if let head = self.head { return .head(head.response, head.url) }
        if let end = self.end {
            return .fail(end ?? TransferError(.badServerResponse, "The response ended without a head."))
        }
        guard self.headWaiter == nil else { return .fail(Self.oneConsumer) }
        self.headWaiter = waiter
        return .wait
    }

    /// The consumer asks for the next chunk. A second consumer waiting at the same time is refused.
    mutating func next(_ waiter: BodyWaiter) -> NextAction {
        if let ready = self.takeReady() { return ready }
        guard self.bodyWaiter == nil else { return .fail(Self.oneConsumer) }
        self.bodyWaiter = waiter
        return .wait
    }

    /// What the consumer can have without waiting: a buffered chunk, the end or the failure; `nil`
    /// when it would have to wait. This lets a consumer that is behind take chunks without
    /// suspending (and being scheduled again) for each.
    mutating func takeReady() -> NextAction? {
        if self.first < self.chunks.count {
            let chunk = self.chunks[self.first]
            self.first += 1
            self.buffered -= chunk.count
            if self.first == self.chunks.count {
                self.chunks.removeAll(keepingCapacity: true)
                self.first = 0
            }
            var resume = false
            if self.producerPaused, self.buffered <= self.limit / 2 {
                self.producerPaused = false
                resume = true
            }
            return .chunk(chunk, resumeProducer: resume)
        }
        switch self.end {
        case .some(.none): return .end
        case .some(.some(let error)): return .fail(error)
        case .none: return nil
        }
    }

    private static var oneConsumer: TransferError {
        TransferError(.invalidRequest, "A response body is read by one consumer at a time; another one is already waiting.")
    }

    /// The consumer gave up (cancelled, or stopped reading before the end): what is buffered is
    /// dropped, and a producer still running is cancelled; the body then fails with `error`. A body
    /// that had ended keeps its end only when nothing buffered was dropped: otherwise the consumer
    /// would take what it read for the whole body.
    mutating func cancel(_ error: TransferError) -> Release {
        let dropsBytes = self.first < self.chunks.count
        self.chunks.removeAll()
        self.first = 0
        self.buffered = 0
        guard self.end == nil else {
            if dropsBytes { self.end = .some(error) }
            return Release()
        }
        var release = self.finish(error)
        release.cancelProducer = true
        return release
    }
}
