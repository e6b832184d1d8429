import Foundation
import HTTPTypes

/// A response whose body is still arriving: the head, and the body as an `AsyncSequence` of chunks.
///
/// ```swift
/// let response = try await engine.stream(TransferRequest(url: url))
/// print(response.head.status)
/// for try await chunk in response.body {
///     try handle.write(contentsOf: chunk)      // the transfer waits while this is slow
/// }
/// ```
public struct StreamedResponse: Sendable {
    /// Status and header fields of the final response (after redirects).
    public var head: HTTPResponse
    /// The URL the response came from.
    public var url: URL
    /// The body, to iterate once. Dropping it before its end cancels the transfer.
    public var body: ResponseBody

    /// Creates a response; Curlew makes these, tests and adapters may too.
    public init(head: HTTPResponse, url: URL, body: ResponseBody) {
        self.head = head
        self.url = url
        self.body = body
    }
}

/// A response body as it arrives: an `AsyncSequence` of `Data` chunks, read once, with
/// backpressure (see ``ResponseBodyStream``).
///
/// Iteration ends after the last byte; it throws the transfer's ``TransferError`` when the transfer
/// failed, after the chunks that arrived before the failure. Cancelling the iterating task, or
/// dropping the body or its iterator before the end, cancels the transfer.
public struct ResponseBody: AsyncSequence, Sendable {
    /// A chunk of the body, as curl delivered it.
    public typealias Element = Data
    /// The error iteration throws: the transfer's.
    public typealias Failure = TransferError

    private let reader: Reader

    init(stream: ResponseBodyStream) {
        self.reader = Reader(stream: stream)
    }

    /// An iterator over the body; the body is read once, whichever copy iterates.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: self.reader, guardian: Guardian(stream: self.reader.stream))
    }

    /// Stops reading: the rest of the body is not wanted, and the transfer is cancelled unless it
    /// already ended.
    public func cancel() {
        self.reader.stream.cancel()
    }

    /// Reads the rest of the body into memory.
    ///
    /// - Parameter limit: The most bytes to accept.
    /// - Returns: The body.
    /// - Throws: ``TransferError/Code/responseTooLarge`` past `limit` (the transfer is cancelled),
    ///   or the transfer's error.
    public func collect(upTo limit: Int) async throws(TransferError) -> Data {
        var data = Data()
        var iterator = self.makeAsyncIterator()
        while let chunk = try await iterator.next() {
            guard data.count + chunk.count <= limit else {
                self.reader.stream.cancel()
                throw TransferError(.responseTooLarge, "The response body exceeds \(limit) bytes.")
            }
            data.append(chunk)
        }
        return data
    }

    /// Reads the chunks of one body.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: Reader
        let guardian: Guardian

        /// The next chunk, `nil` after the last.
        public mutating func next() async throws(TransferError) -> Data? {
            let chunk = try await self.reader.stream.next()
            if chunk == nil { self.guardian.reachedEnd() }
            return chunk
        }

        /// The next chunk, `nil` after the last (the isolated form the compiler calls in `for await`).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(TransferError) -> Data? {
            let chunk = try await self.reader.stream.next()
            if chunk == nil { self.guardian.reachedEnd() }
            return chunk
        }
    }

    /// Cancels the stream when the last copy of the body goes without having been read to its end.
    final class Reader: Sendable {
        let stream: ResponseBodyStream

        init(stream: ResponseBodyStream) {
            self.stream = stream
        }

        deinit {
            self.stream.cancel()  // nothing once the body ended
        }
    }

    /// Cancels the stream when an iterator goes before the end of the body ("ending the iteration
    /// early").
    ///
    /// Safety: `@unchecked Sendable` because `ended` is set only by the iterator that owns this
    /// guardian, one `next()` at a time, and read in its `deinit` after the last of them.
    final class Guardian: @unchecked Sendable {
        let stream: ResponseBodyStream
        private var ended = false

        init(stream: ResponseBodyStream) {
            self.stream = stream
        }

        func reachedEnd() {
            self.ended = true
        }

        deinit {
            if !self.ended { self.stream.cancel() }
        }
    }
}
