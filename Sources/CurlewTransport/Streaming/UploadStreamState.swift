import Foundation

/// Where a streamed request body stands between its producer (a task feeding chunks from an
/// `AsyncSequence`) and its consumer (curl's read callback, on the engine's context), as a value with
/// no I/O.
///
/// ```
///   producer: write(chunk) … write(chunk) ─▶ finish / fail(error)
///                │  buffer ≥ limit: the producer waits until curl took some
///   consumer: read(into:) … ─▶ 0 at the end        nothing buffered yet: curl pauses until a write
/// ```
///
/// Each event returns what the caller must do once the lock it is kept under is released. `Waiter`
/// is the producer's continuation (a plain value in tests).
///
/// With a ``length`` announced, the body's last byte waits for the producer's end: curl sends
/// nothing after `length` bytes, so a producer that goes on past them must be caught before curl has
/// them all, and one that stops short when curl asks for the rest.
struct UploadStreamState<Waiter: Sendable>: Sendable {
    /// What curl's read callback does.
    enum ReadAction: Equatable {
        /// Copied this many bytes; and whether the producer waiting on a full buffer must go on.
        case copied(Int, wakeProducer: Bool)
        /// Nothing buffered and the body goes on: pause curl until the next write.
        case pause
        /// The body is complete.
        case end
        /// The body failed: abort the transfer with this error.
        case fail(TransferError)
    }

    /// What a producer's write does.
    enum WriteAction {
        /// Kept; and whether curl, paused for want of bytes, must be resumed.
        case stored(resumeConsumer: Bool)
        /// Kept, but the buffer is full: wait (the waiter was kept) until curl took some.
        case wait(resumeConsumer: Bool)
        /// Dropped: the transfer no longer wants the body (it ended or failed).
        case stop
    }

    /// The most bytes buffered before the producer waits.
    let limit: Int
    /// The body's announced length, if any.
    let length: Int64?
    private var chunks: [Data] = []
    /// The first chunk of ``chunks`` not yet read through. A chunk read through is released at once;
    /// its slot goes when the array empties, or when most of it is such slots.
    private var first = 0
    /// How far into `chunks[first]` curl has read.
    private var offset = 0
    private(set) var buffered = 0
    /// Bytes handed to curl so far.
    private(set) var sent: Int64 = 0
    /// Whether the producer said the body is complete.
    private(set) var isComplete = false
    /// The error the body failed with (the producer's, or the transfer's end).
    private(set) var failure: TransferError?
    /// Whether curl is paused for want of bytes.
    private(set) var consumerPaused = false
    private var producerWaiter: Waiter?

    /// How many sent slots may wait at the front of ``chunks`` before they are removed.
    private static var compactionThreshold: Int { 64 }

    init(limit: Int, length: Int64? = nil) {
        self.limit = max(1, limit)
        self.length = length
    }

    // MARK: Producer

    /// The producer has a chunk. A full buffer keeps `waiter` until curl has read some. With a
    /// ``length``, a producer that has written all of it goes on (its end releases the last byte),
    /// and one past it waits until the failure stops it.
    mutating func write(_ chunk: Data, waiter: Waiter) -> WriteAction {
        guard self.failure == nil, !self.isComplete else { return .stop }
        let resume = self.consumerPaused
        self.consumerPaused = false
        if !chunk.isEmpty {
            self.chunks.append(chunk)
            self.buffered += chunk.count
        }
        if let length = self.length, self.sent + Int64(self.buffered) >= length {
            guard self.sent + Int64(self.buffered) > length else { return .stored(resumeConsumer: resume) }
            self.producerWaiter = waiter
            return .wait(resumeConsumer: resume)
        }
        guard self.buffered >= self.limit else { return .stored(resumeConsumer: resume) }
        self.producerWaiter = waiter
        return .wait(resumeConsumer: resume)
    }

    /// The producer has no more chunks. Returns whether curl must be resumed (to read the end).
    mutating func complete() -> Bool {
        guard self.failure == nil, !self.isComplete else { return false }
        self.isComplete = true
        defer { self.consumerPaused = false }
        return self.consumerPaused
    }

    /// The body cannot go on: the producer's sequence threw, or the transfer ended. Returns the
    /// producer waiting on a full buffer, to stop, and whether curl must be resumed (to fail).
    mutating func fail(_ error: TransferError) -> (waiter: Waiter?, resumeConsumer: Bool) {
        guard self.failure == nil else { return (nil, false) }
        self.failure = error
        self.chunks.removeAll()
        self.first = 0
        self.offset = 0
        self.buffered = 0
        let waiter = self.producerWaiter
        self.producerWaiter = nil
        defer { self.consumerPaused = false }
        return (waiter, self.consumerPaused)
    }

    // MARK: Consumer

    /// curl wants up to `capacity` bytes; `copy` copies one piece (a chunk and a range of it) into
    /// its buffer at the given position.
    mutating func read(capacity: Int, copy: (Data, Range<Int>, Int) -> Void) -> ReadAction {
        if let failure = self.failure { return .fail(failure) }
        var capacity = capacity
        if let length = self.length {
            let unsent = self.sent + Int64(self.buffered)
            if unsent > length {
                return .fail(TransferError(.requestBodyFileChanged,
                                           "The request body's sequence went on past the \(length) bytes announced."))
            }
            if self.isComplete, unsent < length {
                return .fail(TransferError(.requestBodyFileChanged,
                                           "The request body's sequence ended \(length - unsent) bytes before the length announced."))
            }
            // The last byte waits for the producer's end (or for more bytes, which fail the body).
            if !self.isComplete { capacity = min(capacity, Int(clamping: max(0, length - self.sent - 1))) }
        }
        var copied = 0
        while copied < capacity, self.first < self.chunks.count {
            let chunk = self.chunks[self.first]
            let count = min(capacity - copied, chunk.count - self.offset)
            copy(chunk, self.offset..<(self.offset + count), copied)
            copied += count
            self.offset += count
            if self.offset == chunk.count {
                self.chunks[self.first] = Data()  // sent: released now, not when the buffer empties
                self.first += 1
                self.offset = 0
            }
        }
        if self.first == self.chunks.count {
            self.chunks.removeAll(keepingCapacity: true)
            self.first = 0
        } else if self.first >= Self.compactionThreshold, self.first * 2 >= self.chunks.count {
            // A producer that stays ahead never lets the buffer empty: drop the sent slots too.
            self.chunks.removeFirst(self.first)
            self.first = 0
        }
        guard copied > 0 else {
            if self.isComplete { return .end }
            self.consumerPaused = true
            return .pause
        }
        self.buffered -= copied
        self.sent += Int64(copied)
        var wake = false
        if self.producerWaiter != nil, self.buffered < self.limit {
            wake = true
        }
        return .copied(copied, wakeProducer: wake)
    }

    /// The bytes the state holds on to: what waits for curl, and the rest of a chunk curl is reading.
    var retainedByteCount: Int {
        self.chunks.reduce(0) { $0 + $1.count }
    }

    /// Takes the producer's waiter after ``read(capacity:copy:)`` said to wake it.
    mutating func takeProducerWaiter() -> Waiter? {
        defer { self.producerWaiter = nil }
        return self.producerWaiter
    }
}
