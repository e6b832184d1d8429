import Foundation
import HTTPTypes

/// A response body handed over as it arrives, with backpressure through curl: the destination of a
/// transfer whose body is streamed (``ResponseDestination/stream(_:)``).
///
/// The transfer puts each chunk in a buffer of ``bufferSize`` bytes; one consumer takes them with
/// ``body``. When the consumer falls behind and the buffer is full, curl is paused
/// (`CURL_WRITEFUNC_PAUSE`): it stops reading the socket, so the server's sending stops once the
/// socket buffers are full, and memory stays bounded whatever the body's size. When the consumer has
/// drained half the buffer, the engine's context resumes curl (`curl_easy_pause`).
///
/// Most code never makes one: ``TransferEngine/stream(_:bufferSize:)`` (and the manager's streaming
/// methods) make it, start the transfer and return a ``StreamedResponse``. Make one yourself to
/// stream the body of a ``Transfer`` you drive with a ``TransferDelegate``.
///
/// **One transfer, one consumer.** A stream serves the first transfer that starts with it (another
/// fails with ``TransferError/Code/invalidRequest``), and its body is read once.
///
/// **Ending early.** Cancelling the task that iterates the body, or dropping the body (or its
/// iterator) before its end, cancels the transfer: nobody would read the rest.
public final class ResponseBodyStream: Sendable, Hashable {
    /// How the stream reaches the transfer that fills it.
    package struct Producer: Sendable {
        /// Called (on any thread) when the consumer drained a paused buffer.
        package var resume: @Sendable () -> Void
        /// Called (on any thread) when the consumer gave up while the transfer runs.
        package var cancel: @Sendable () -> Void
        /// The transfer's identity: only it ends the stream once it has claimed it.
        package var owner: ObjectIdentifier?

        package init(resume: @escaping @Sendable () -> Void, cancel: @escaping @Sendable () -> Void,
                     owner: ObjectIdentifier? = nil) {
            self.resume = resume
            self.cancel = cancel
            self.owner = owner
        }
    }

    typealias HeadWaiter = CheckedContinuation<Result<(HTTPResponse, URL), TransferError>, Never>
    typealias BodyWaiter = CheckedContinuation<Result<Data?, TransferError>, Never>

    /// What the lock guards.
    private struct Guarded: Sendable {
        var state: ResponseStreamState<HeadWaiter, BodyWaiter>
        var producer: Producer?
        var isClaimed = false
        /// The claiming producer's ``Producer/owner``.
        var owner: ObjectIdentifier?
    }

    /// The default buffer: 1 MiB.
    public static let defaultBufferSize = 1 << 20

    /// How many bytes may wait for the consumer before curl is paused.
    public let bufferSize: Int
    private let guarded: Locked<Guarded>

    /// Creates an empty stream.
    ///
    /// - Parameter bufferSize: How many bytes may wait for the consumer before the transfer is paused
    ///   (at least 1; one read of curl's may come on top: as large as this, between 16 and 256 KiB).
    public init(bufferSize: Int = ResponseBodyStream.defaultBufferSize) {
        self.bufferSize = max(1, bufferSize)
        self.guarded = Locked(Guarded(state: ResponseStreamState(limit: self.bufferSize)))
    }

    /// Two streams are equal when they are the same object: one stream carries one response's body.
    public static func == (lhs: ResponseBodyStream, rhs: ResponseBodyStream) -> Bool {
        lhs === rhs
    }

    /// Hashes the object's identity, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    // MARK: Consumer

    /// The final response's head and URL, once they arrived (redirects are followed first).
    ///
    /// - Throws: The transfer's ``TransferError`` when it ended before a head arrived; cancelling
    ///   the waiting task cancels the transfer. ``TransferError/Code/invalidRequest`` when another
    ///   task is already waiting (one consumer at a time; the same holds for the body).
    public func head() async throws(TransferError) -> (HTTPResponse, URL) {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: HeadWaiter) in
                let action = self.guarded.withLock { $0.state.awaitHead(continuation) }
                switch action {
                case .head(let response, let url): continuation.resume(returning: .success((response, url)))
                case .fail(let error): continuation.resume(returning: .failure(error))
                case .wait: break
                }
            }
        } onCancel: {
            self.cancel()
        }
        return try result.get()
    }

    /// The body, to iterate once.
    public var body: ResponseBody {
        ResponseBody(stream: self)
    }

    /// The next chunk; `nil` at the end.
    ///
    /// - Throws: The transfer's ``TransferError`` once what arrived before it failed has been read;
    ///   ``TransferError/Code/cancelled`` after ``cancel()`` or when the waiting task is cancelled
    ///   (which cancels the transfer).
    func next() async throws(TransferError) -> Data? {
        if Task.isCancelled { self.cancel() }
        // What is buffered is taken without suspending: a suspension costs a trip through the
        // executor (a thread woken) for every chunk.
        let (ready, readyProducer) = self.guarded.withLock { guarded -> (ResponseStreamState<HeadWaiter, BodyWaiter>.NextAction?, Producer?) in
            let action = guarded.state.takeReady()
            if case .chunk(_, true) = action { return (action, guarded.producer) }
            return (action, nil)
        }
        switch ready {
        case .chunk(let chunk, _):
            readyProducer?.resume()
            return chunk
        case .end: return nil
        case .fail(let error): throw error
        case .wait, nil: break
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: BodyWaiter) in
                let (action, producer) = self.guarded.withLock { guarded in
                    let action = guarded.state.next(continuation)
                    if case .chunk(_, true) = action { return (action, guarded.producer) }
                    return (action, nil)
                }
                switch action {
                case .chunk(let chunk, _):
                    continuation.resume(returning: .success(chunk))
                    producer?.resume()
                case .end: continuation.resume(returning: .success(nil))
                case .fail(let error): continuation.resume(returning: .failure(error))
                case .wait: break
                }
            }
        } onCancel: {
            self.cancel()
        }
        return try result.get()
    }

    /// Stops the stream: what is buffered is dropped, the transfer is cancelled if it still runs,
    /// and the body's iteration ends with ``TransferError/Code/cancelled``. Safe at any moment, any
    /// number of times.
    public func cancel() {
        let (release, producer) = self.guarded.withLock { guarded in
            let release = guarded.state.cancel(TransferError(.cancelled, "The response body stream was cancelled."))
            let producer = release.cancelProducer ? guarded.producer : nil
            if release.cancelProducer { guarded.producer = nil }
            return (release, producer)
        }
        Self.resume(release)
        producer?.cancel()
    }

    private static func resume(_ release: ResponseStreamState<HeadWaiter, BodyWaiter>.Release) {
        if let end = release.end {
            release.headWaiter?.resume(returning: .failure(end))
            release.bodyWaiter?.resume(returning: .failure(end))
        } else {
            release.headWaiter?.resume(returning: .failure(
                TransferError(.badServerResponse, "The response ended without a head.")))
            release.bodyWaiter?.resume(returning: .success(nil))
        }
    }

    // MARK: Producer (the transfer, on the engine's context)

    /// Binds the stream to the transfer that fills it; `false` when another already has it.
    package func claim(_ producer: Producer) -> Bool {
        let claimed = self.guarded.withLock { guarded -> Bool in
            guard !guarded.isClaimed else { return false }
            guarded.isClaimed = true
            guarded.owner = producer.owner
            guarded.producer = producer
            return true
        }
        if claimed, self.guarded.withLock({ $0.state.end != nil }) {
            producer.cancel()  // cancelled before the transfer started
        }
        return claimed
    }

    /// The final response's head arrived.
    package func receiveHead(_ response: HTTPResponse, url: URL) {
        self.guarded.withLock { $0.state.receiveHead(response, url: url) }?.resume(returning: .success((response, url)))
    }

    /// Offers a chunk of body; `false` when the buffer is full and the transfer must pause (the
    /// chunk is not kept: offer it again after ``Producer/resume``).
    package func offer(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let chunk = Data(bytes)  // copied before the lock: the consumer never waits for a copy
        let action = self.guarded.withLock { $0.state.offer(chunk) }
        switch action {
        case .stored, .discard: return true
        case .deliver(let chunk, let waiter):
            waiter.resume(returning: .success(chunk))
            return true
        case .pause:
            return false
        }
    }

    /// The transfer ended: complete (`nil`) or with `error`. With an `owner`, only the transfer that
    /// claimed the stream ends it (or any, before a claim): one that was refused the stream, because
    /// another has it, leaves it alone.
    package func finish(_ error: TransferError?, owner: ObjectIdentifier? = nil) {
        let release = self.guarded.withLock { guarded -> ResponseStreamState<HeadWaiter, BodyWaiter>.Release? in
            if let owner, guarded.isClaimed, guarded.owner != owner { return nil }
            guarded.producer = nil
            return guarded.state.finish(error)
        }
        if let release { Self.resume(release) }
    }
}
