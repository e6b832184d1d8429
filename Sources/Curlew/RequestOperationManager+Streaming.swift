import CurlewOperations
import CurlewSerialization
import CurlewTransport
import Foundation
import HTTPTypes

/// Bodies that do not fit in memory, or that arrive or leave over time: downloads to a file, response
/// bodies streamed as they arrive, uploads produced while they are sent.
extension RequestOperationManager {
    // MARK: Files

    /// Downloads `path` into the file at `destination`, streamed (never held in memory).
    ///
    /// The body goes to a temporary file beside `destination`, which replaces it only when the
    /// transfer succeeded with a status the manager's serializer accepts: on any failure — a refused
    /// status (thrown as `ResponseSerializationError` with the first 64 KiB of the body), a transfer
    /// error, a cancel, a full disk — `destination` is exactly as it was (absent, or its old bytes)
    /// and no temporary file remains.
    ///
    /// ```swift
    /// try await api.download("images/big.iso", to: fileURL, progress: { progress in
    ///     print(progress.bytesReceived, "of", progress.expectedBytesToReceive ?? -1)
    /// })
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - destination: A `file:` URL.
    ///   - parameters: Parameters for the query string, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - progress: Called with the download's progress (the latest value, on a queue of the
    ///     library's, all of it before this returns), or `nil`.
    /// - Returns: The response; its `fileURL` is `destination`.
    /// - Throws: See ``RequestOperationManager``'s async methods.
    @discardableResult
    public func download(
        _ path: String, to destination: URL, parameters: [String: any ParameterConvertible]? = nil, headers: [String: String] = [:],
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> TransferResponse {
        let validation = self.snapshot.validation
        var request = try self.request(.get, path, parameters: Self.encodable(parameters), headers: headers)
        request.destination = .file(destination)
        request.options.fileReplacementStatusCodes = validation.bodySerializer.acceptableStatusCodes
        let relay = progress.map(ProgressRelay.init)
        let run = RequestRun(progress: relay.map { relay in { @Sendable progress in relay.report(progress) } })
        do {
            return try await self.perform(request, run: run) { response in
                await relay?.flush()
                _ = try validation.bodySerializer.serialize(response: response.head, body: response.body, url: response.url)
                return response
            }
        } catch {
            await relay?.flush()
            throw error
        }
    }

    // MARK: Streams

    /// Sends `method` to `path` and returns as soon as the response head arrived and its status is
    /// acceptable, with the body still arriving as an `AsyncSequence` of chunks.
    ///
    /// ```swift
    /// let response = try await api.stream(.get, "export.jsonl")
    /// for try await chunk in response.body { try output.write(contentsOf: chunk) }
    /// ```
    ///
    /// Memory stays bounded whatever the body's size: when the reader falls behind by `bufferSize`
    /// bytes, curl stops reading the socket until it catches up (see `ResponseBodyStream`). The
    /// manager's retries apply until the head: a retryable status (a 503, say) is retried before
    /// anything is returned. A refused status throws `ResponseSerializationError` with up to 64 KiB of
    /// the body. Cancelling the reading task, or dropping the body before its end, cancels the
    /// transfer; so does ``shutdown()``.
    ///
    /// - Parameters:
    ///   - method: The method; `GET` by default.
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - body: A request body (for example `RequestBody.stream(_:)`), replacing the parameters'.
    ///   - bufferSize: How many bytes may wait for the reader before the transfer is paused.
    /// - Returns: The head, the URL and the body.
    /// - Throws: See ``RequestOperationManager``'s async methods.
    public func stream(
        _ method: HTTPRequest.Method = .get, _ path: String, parameters: [String: any ParameterConvertible]? = nil, headers: [String: String] = [:],
        body: RequestBody? = nil, bufferSize: Int = ResponseBodyStream.defaultBufferSize
    ) async throws -> StreamedResponse {
        var request = try self.request(method, path, parameters: Self.encodable(parameters), headers: headers)
        if let body { request.body = body }
        return try await self.stream(prepared: request, bufferSize: bufferSize)
    }

    /// Sends `request` (prepared as the manager sends it) and returns as soon as the response head
    /// arrived, with the body still arriving (see ``stream(_:_:parameters:headers:body:bufferSize:)``).
    ///
    /// - Parameters:
    ///   - request: Any request; its destination is replaced.
    ///   - bufferSize: How many bytes may wait for the reader before the transfer is paused.
    ///   - validatingStatus: Whether a status the manager's serializer refuses throws (the default);
    ///     `false` returns every response, whatever its status (an adapter, such as an OpenAPI
    ///     transport, that judges statuses itself).
    /// - Returns: The head, the URL and the body.
    /// - Throws: See ``RequestOperationManager``'s async methods.
    public func stream(
        for request: TransferRequest, bufferSize: Int = ResponseBodyStream.defaultBufferSize, validatingStatus: Bool = true
    ) async throws -> StreamedResponse {
        let prepared = self.prepared(request)
        guard validatingStatus else {
            return try await self.performStreaming(prepared, bufferSize: bufferSize, run: RequestRun())
        }
        return try await self.stream(prepared: prepared, bufferSize: bufferSize)
    }

    /// Streams the response to a prepared request (see ``stream(_:_:parameters:headers:body:bufferSize:)``).
    func stream(prepared request: TransferRequest, bufferSize: Int, run: RequestRun = RequestRun()) async throws -> StreamedResponse {
        let validation = self.snapshot.validation
        let streamed = try await self.performStreaming(request, bufferSize: bufferSize, run: run)
        guard validation.bodySerializer.acceptableStatusCodes.contains(streamed.head.status.code) else {
            // The body of a refused response, as far as it is short, shows what the server said.
            let body = try? await streamed.body.collect(upTo: Self.refusedBodyLimit)
            streamed.body.cancel()
            throw ResponseSerializationError(.unacceptableStatusCode(streamed.head.status.code),
                                             response: streamed.head, body: body, url: streamed.url)
        }
        return streamed
    }

    /// How much of a refused streamed response's body an error keeps.
    static let refusedBodyLimit = 64 << 10

    // MARK: Uploads

    /// Sends the chunks `body` yields as the request body — chunked, with backpressure: the sequence
    /// is asked for more only as curl sends — and decodes the response.
    ///
    /// ```swift
    /// let lines = AsyncStream<Data> { continuation in … }        // any AsyncSequence of bytes
    /// let receipt = try await api.upload(lines, to: "ingest", as: Receipt.self)
    /// ```
    ///
    /// A streamed body is sent once: a redirect that keeps the body (307, 308) fails with
    /// `TransferError/Code/requestBodyStreamExhausted`, and a retry that would need it again is not
    /// made (the attempt's outcome stands).
    ///
    /// - Parameters:
    ///   - body: Any `AsyncSequence` of `Data`, `[UInt8]` or other bytes.
    ///   - path: Resolved against the base URL.
    ///   - method: `POST` by default.
    ///   - length: The body's length when known (sent as `Content-Length`), else `nil` (chunked).
    ///   - headers: Header fields for this request only (a `Content-Type`, say).
    ///   - type: What to decode (`Data` for the raw body, `String` for text).
    ///   - progress: Called with the upload's progress (`bytesSent`; the latest value, on a queue of
    ///     the library's, all of it before this returns), or `nil`.
    /// - Returns: The decoded response.
    /// - Throws: See ``RequestOperationManager``'s async methods.
    public func upload<Chunks: AsyncSequence & Sendable, Value: Decodable & Sendable>(
        _ body: Chunks, to path: String, method: HTTPRequest.Method = .post, length: Int64? = nil,
        headers: [String: String] = [:], as type: Value.Type = Value.self,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> Value where Chunks.Element: DataProtocol {
        var request = try self.request(method, path, parameters: nil, headers: headers)
        request.body = .stream(RequestBodyStream(body, length: length))
        let relay = progress.map(ProgressRelay.init)
        let run = RequestRun(progress: relay.map { relay in { @Sendable progress in relay.report(progress) } })
        do {
            let reply = try await self.response(for: request, as: type, run: run)
            await relay?.flush()
            return reply.value
        } catch {
            await relay?.flush()
            throw error
        }
    }
}
