import Foundation

/// A request body produced while it is sent: chunks from an `AsyncSequence`, with backpressure
/// through curl (``RequestBody/stream(_:)``).
///
/// ```swift
/// let body = RequestBodyStream(lines.map { Data(($0 + "\n").utf8) })   // any AsyncSequence of bytes
/// var request = TransferRequest(url: uploadURL, method: .post, body: .stream(body))
/// let response = try await engine.execute(request)
/// ```
///
/// The sequence is iterated by a task of its own from the moment curl first asks for body bytes,
/// never before. Chunks wait in a buffer of ``bufferSize`` bytes: when it is full the sequence is not
/// asked for more until curl has sent some; when it is empty curl is paused (`CURL_READFUNC_PAUSE`)
/// and resumed (`curl_easy_pause`) by the next chunk. With no ``length`` the body is sent with
/// `Transfer-Encoding: chunked` on HTTP/1.1 and as DATA frames on HTTP/2; with one it is announced in
/// `Content-Length`, and a sequence that ends early or goes on fails the transfer
/// (``TransferError/Code/requestBodyFileChanged``). Its last byte is sent once the sequence has ended:
/// curl asks for nothing past the length, so only then can a sequence that goes on be caught.
///
/// **A slow producer.** curl's idle timeout (``TransferOptions/idleTimeout``, 60 s by default) counts
/// the producer's silence as a silent server's: a sequence that yields nothing for longer fails the
/// transfer with ``TransferError/Code/timedOut``. Raise it, or set `nil`, for a producer that may pause
/// (a paused *reader* of a response body is exempt: curl does not speed-check a paused download).
/// With `length: 0` the body is empty and the sequence is not read.
///
/// **Sent once.** A streamed body cannot be sent again: a redirect that keeps the body (307, 308)
/// fails with ``TransferError/Code/requestBodyStreamExhausted`` instead of sending half a body, and a
/// retry that would need it again is not made (``TransferEngine/execute(_:retry:)`` and the manager
/// return the attempt's outcome, the 503 say). Until curl has asked for the first byte (a refused
/// connection, say) a retry may still use it. One transfer has it at a time: another one started meanwhile fails
/// with ``TransferError/Code/invalidRequest``. If the sequence throws, the transfer fails with
/// ``TransferError/Code/requestBodyStreamExhausted`` carrying the error's description.
public final class RequestBodyStream: Sendable, Hashable {
    typealias Waiter = CheckedContinuation<Bool, Never>

    /// What the lock guards.
    private struct Guarded: Sendable {
        var state: UploadStreamState<Waiter>
        /// Resumes curl, paused for want of bytes (set by the transfer reading the body).
        var resumeConsumer: (@Sendable () -> Void)?
        /// The transfer the stream is attached to, until it ends.
        var consumer: ObjectIdentifier?
        /// The task iterating the sequence, once curl asked for the first byte.
        var producer: Task<Void, Never>?
    }

    /// The default buffer: 256 KiB.
    public static let defaultBufferSize = 256 << 10

    /// The body's length in bytes, announced as `Content-Length`; `nil` when unknown (chunked).
    public let length: Int64?
    /// How many bytes may wait for curl before the sequence is asked for no more.
    public let bufferSize: Int
    private let produce: @Sendable (RequestBodyStream) async throws -> Void
    private let guarded: Locked<Guarded>

    /// A body made of the chunks `chunks` yields, in order.
    ///
    /// - Parameters:
    ///   - chunks: Any `AsyncSequence` of bytes (`Data`, `[UInt8]`, `ArraySlice<UInt8>`, …).
    ///   - length: The total length when known (sent as `Content-Length`), else `nil` (chunked).
    ///   - bufferSize: How many bytes may wait for curl (at least 1).
    public init<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, length: Int64? = nil, bufferSize: Int = RequestBodyStream.defaultBufferSize
    ) where Chunks.Element: DataProtocol {
        self.length = length.map { max(0, $0) }
        self.bufferSize = max(1, bufferSize)
        self.produce = { stream in
            for try await chunk in chunks {
                guard await stream.write(Data(chunk)) else { return }
            }
            stream.complete()
        }
        self.guarded = Locked(Guarded(state: UploadStreamState(limit: self.bufferSize, length: self.length)))
    }

    /// Two streams are equal when they are the same object: a body is one producer, sent once.
    public static func == (lhs: RequestBodyStream, rhs: RequestBodyStream) -> Bool {
        lhs === rhs
    }

    /// Hashes the object's identity, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    /// Whether curl has asked for the body: from then on it cannot be sent again.
    public var hasStarted: Bool {
        self.guarded.withLock { $0.producer != nil }
    }

    // MARK: Producer

    /// Buffers `chunk`; waits while the buffer is full. `false` when the body is no longer wanted.
    private func write(_ chunk: Data) async -> Bool {
        await withCheckedContinuation { (continuation: Waiter) in
            let (action, resume) = self.guarded.withLock { guarded -> (UploadStreamState<Waiter>.WriteAction, (@Sendable () -> Void)?) in
                let action = guarded.state.write(chunk, waiter: continuation)
                switch action {
                case .stored(true), .wait(true): return (action, guarded.resumeConsumer)
                case .stored, .wait, .stop: return (action, nil)
                }
            }
            resume?()
            switch action {
            case .stored: continuation.resume(returning: true)
            case .stop: continuation.resume(returning: false)
            case .wait: break  // resumed by the read that drains the buffer, or by a failure
            }
        }
    }

    private func complete() {
        let resume = self.guarded.withLock { guarded in guarded.state.complete() ? guarded.resumeConsumer : nil }
        resume?()
    }

    private func fail(_ error: TransferError) {
        let (waiter, resume) = self.guarded.withLock { guarded -> (Waiter?, (@Sendable () -> Void)?) in
            let (waiter, resume) = guarded.state.fail(error)
            return (waiter, resume ? guarded.resumeConsumer : nil)
        }
        waiter?.resume(returning: false)
        resume?()
    }

    // MARK: Consumer (the transfer, on the engine's context)

    /// Binds the stream to the transfer `owner`, about to read it: `resume` wakes that transfer's
    /// curl when it was paused for want of bytes.
    ///
    /// - Returns: `nil`, or why the transfer cannot have the stream:
    ///   ``TransferError/Code/requestBodyStreamExhausted`` when the body was already read (it cannot
    ///   be sent again), ``TransferError/Code/invalidRequest`` while another transfer has it.
    func attach(owner: ObjectIdentifier, resume: @escaping @Sendable () -> Void) -> TransferError? {
        self.guarded.withLock { guarded in
            guard guarded.producer == nil else {
                return TransferError(.requestBodyStreamExhausted,
                                     "The request body stream was already sent by another transfer; it cannot be sent again.")
            }
            guard guarded.consumer == nil || guarded.consumer == owner else {
                return TransferError(.invalidRequest, "A request body stream serves one transfer at a time; another one has it.")
            }
            guarded.consumer = owner
            guarded.resumeConsumer = resume
            return nil
        }
    }

    /// What curl's read callback gets: bytes copied into `buffer`, a pause, the end, or a failure.
    /// The first call starts the task iterating the sequence.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> UploadStreamState<Waiter>.ReadAction {
        guard let base = buffer.baseAddress else { return .copied(0, wakeProducer: false) }
        var start: Task<Void, Never>?
        let (action, waiter) = self.guarded.withLock { guarded -> (UploadStreamState<Waiter>.ReadAction, Waiter?) in
            if guarded.producer == nil {
                let task = Task<Void, Never> { [produce] in
                    do {
                        try await produce(self)
                    } catch {
                        self.fail(TransferError(.requestBodyStreamExhausted,
                                                "The request body's sequence failed: \(error)"))
                    }
                }
                guarded.producer = task
                start = task
            }
            let action = guarded.state.read(capacity: buffer.count) { chunk, range, position in
                chunk.copyBytes(to: (base + position).assumingMemoryBound(to: UInt8.self),
                                from: (chunk.startIndex + range.lowerBound)..<(chunk.startIndex + range.upperBound))
            }
            if case .copied(_, true) = action { return (action, guarded.state.takeProducerWaiter()) }
            return (action, nil)
        }
        _ = start
        waiter?.resume(returning: true)
        return action
    }

    /// Bytes handed to curl so far.
    var sent: Int64 {
        self.guarded.withLock { $0.state.sent }
    }

    /// The transfer `owner` ended: if it had the stream and read from it, the sequence is asked for
    /// nothing more. A body that was never read stays usable by another transfer (a retry); a
    /// transfer that was refused the stream leaves it alone.
    func transferEnded(_ error: TransferError?, owner: ObjectIdentifier) {
        let task = self.guarded.withLock { guarded -> Task<Void, Never>? in
            guard guarded.consumer == owner else { return nil }
            guarded.consumer = nil
            guarded.resumeConsumer = nil
            return guarded.producer
        }
        guard let task else { return }
        self.fail(error ?? TransferError(.cancelled, "The transfer ended; the request body is no longer wanted."))
        task.cancel()
    }
}
