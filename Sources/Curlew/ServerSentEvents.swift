import CurlewSerialization
import CurlewTransport
import Foundation
import HTTPTypes

/// Server-Sent Events from one URL, as an `AsyncSequence` that reconnects: what a browser's
/// `EventSource` does, for a task.
///
/// ```swift
/// for try await event in api.events("notifications") {
///     print(event.type, event.data)          // "message", "{\"id\":42}"
/// }
/// ```
///
/// Each connection is a GET with `Accept: text/event-stream`, its body streamed and parsed as it
/// arrives (`ServerSentEventParser`, the WHATWG rules). When the body ends or the connection breaks,
/// the sequence waits the reconnection time — the server's `retry:` when it sent one — and connects
/// again with `Last-Event-ID`, so the server can resume where it was. It ends when the server answers
/// **204 No Content** (the standard's way to say "stop"), and fails — without reconnecting — on any
/// other refused status or a content type that is not `text/event-stream`, on an event larger than
/// ``maximumEventSize``, or after ``maximumReconnectionAttempts`` attempts in a row that brought no
/// event. Cancelling the iterating task, or leaving the loop, closes the connection.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// One dispatched event.
    public typealias Element = ServerSentEvent
    /// Any error: the transfer's, a refused status or content type, or an event past the size limit.
    public typealias Failure = any Error

    /// Opens one connection, sending the last event ID when it is not empty.
    let connect: @Sendable (_ lastEventID: String) async throws -> StreamedResponse
    /// How long to wait before reconnecting when the server did not say (`retry:`).
    public var reconnectionTime: Duration
    /// The most connection attempts in a row that bring no event before the sequence fails; `nil`:
    /// no limit (a browser's behaviour).
    public var maximumReconnectionAttempts: Int?
    /// The longest line and the most data one event may have, in bytes.
    public var maximumEventSize: Int

    /// Events from the connections `connect` opens (``RequestOperationManager/events(_:parameters:headers:)``
    /// and `TransferEngine.events(_:)` make one for you).
    ///
    /// - Parameters:
    ///   - reconnectionTime: The wait before reconnecting when the server did not set one; 3 s.
    ///   - maximumReconnectionAttempts: Attempts in a row without an event before failing; `nil`: no limit.
    ///   - maximumEventSize: The longest line and event, in bytes.
    ///   - connect: Opens a connection: a GET whose response body is streamed, with `Last-Event-ID`
    ///     set to its argument unless that is empty.
    public init(
        reconnectionTime: Duration = .seconds(3), maximumReconnectionAttempts: Int? = nil,
        maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize,
        connect: @escaping @Sendable (_ lastEventID: String) async throws -> StreamedResponse
    ) {
        self.connect = connect
        self.reconnectionTime = reconnectionTime
        self.maximumReconnectionAttempts = maximumReconnectionAttempts
        self.maximumEventSize = maximumEventSize
    }

    /// An iterator that opens the first connection on its first `next()`.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(events: self)
    }

    /// Reads events, connection after connection.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let events: ServerSentEvents
        private var parser: ServerSentEventParser
        private var body: ResponseBody.AsyncIterator?
        private var pending: [ServerSentEvent] = []
        private var nextPending = 0
        /// Connection attempts in a row that brought no event.
        private var fruitless = 0
        /// Whether a connection was attempted: later ones are reconnections, after a wait.
        private var hasConnected = false
        private var isFinished = false

        init(events: ServerSentEvents) {
            self.events = events
            self.parser = ServerSentEventParser(maximumEventSize: events.maximumEventSize)
        }

        /// The next event; `nil` once the server said to stop (204).
        ///
        /// - Throws: `TransferError/Code/cancelled` when the task is cancelled; why the stream failed
        ///   (see ``ServerSentEvents``).
        public mutating func next() async throws -> ServerSentEvent? {
            while true {
                if self.nextPending < self.pending.count {
                    defer { self.nextPending += 1 }
                    return self.pending[self.nextPending]
                }
                self.pending.removeAll(keepingCapacity: true)
                self.nextPending = 0
                if self.isFinished { return nil }
                guard var body = self.body else {
                    try await self.open()
                    continue
                }
                let read: Result<Data?, TransferError>
                do {
                    read = .success(try await body.next())
                } catch {
                    read = .failure(error)
                }
                let chunk: Data?
                switch read {
                case .success(let data):
                    chunk = data
                case .failure(let error):
                    if error.code == .cancelled { throw error }
                    self.dropConnection()  // the connection broke: reconnect
                    continue
                }
                self.body = body
                guard let chunk else {
                    self.dropConnection()
                    continue
                }
                self.pending = try self.parser.consume(chunk)
                if !self.pending.isEmpty { self.fruitless = 0 }
            }
        }

        /// Waits if this is a reconnection, then connects; a 204 finishes the sequence.
        private mutating func open() async throws {
            if self.hasConnected {
                if let limit = self.events.maximumReconnectionAttempts, self.fruitless >= limit {
                    throw TransferError(.networkConnectionLost,
                                        "The event stream reconnected \(self.fruitless) times in a row without an event.")
                }
                do {
                    try await Task.sleep(for: self.parser.reconnectionTime ?? self.events.reconnectionTime)
                } catch {
                    throw TransferError(.cancelled, "The event stream was cancelled.")
                }
            }
            self.hasConnected = true
            self.fruitless += 1
            let response: StreamedResponse
            do {
                response = try await self.events.connect(self.parser.lastEventID)
            } catch let error as TransferError where error.code != .cancelled && error.code != .badURL
                && error.code != .unsupportedURL && error.code != .invalidRequest {
                return  // a network failure: reconnect, as a browser does
            }
            if response.head.status == .noContent {
                response.body.cancel()
                self.isFinished = true
                return
            }
            let mediaType = response.head.headerFields[.contentType]?
                .split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard mediaType == "text/event-stream" else {
                response.body.cancel()
                throw ResponseSerializationError(.unacceptableContentType(mediaType), response: response.head, body: nil,
                                                 url: response.url)
            }
            self.body = response.body.makeAsyncIterator()
        }

        /// The connection ended or broke: the event it was in the middle of is dropped.
        private mutating func dropConnection() {
            self.body = nil
            self.parser.reset()
        }
    }
}

extension RequestOperationManager {
    /// Server-Sent Events from `path`, reconnecting with `Last-Event-ID` (see ``ServerSentEvents``).
    ///
    /// ```swift
    /// for try await event in api.events("notifications") where event.type == "update" {
    ///     try handle(JSONDecoder().decode(Update.self, from: Data(event.data.utf8)))
    /// }
    /// ```
    ///
    /// Each connection is built like the manager's other requests (base URL, serializer, headers,
    /// credentials to the base URL's origin, retries until the head) and validated by its status codes;
    /// nothing connects until the iteration starts.
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters for the query string, or `nil`.
    ///   - headers: Header fields for every connection.
    /// - Returns: The events.
    public func events(_ path: String, parameters: [String: any ParameterConvertible]? = nil, headers: [String: String] = [:]) -> ServerSentEvents {
        ServerSentEvents { lastEventID in
            var request = try self.request(.get, path, parameters: Self.encodable(parameters), headers: headers)
            let named = Set(headers.keys.map { $0.lowercased() })
            try Self.prepareForEvents(&request, lastEventID: lastEventID,
                                      keeping: [.accept, .cacheControl].filter { named.contains($0.canonicalName) })
            return try await self.stream(prepared: request, bufferSize: ResponseBodyStream.defaultBufferSize)
        }
    }

    /// The headers an event-stream connection sends (`Accept`, `Cache-Control`, `Last-Event-ID`),
    /// except the fields named in `keeping`.
    static func prepareForEvents(_ request: inout TransferRequest, lastEventID: String, keeping: [HTTPField.Name]) throws {
        if !keeping.contains(.accept) { request.head.headerFields[.accept] = "text/event-stream" }
        if !keeping.contains(.cacheControl) { request.head.headerFields[.cacheControl] = "no-cache" }
        if !lastEventID.isEmpty { try request.setHeaderField("Last-Event-ID", value: lastEventID) }
    }
}

extension TransferEngine {
    /// Server-Sent Events from `request`'s URL, reconnecting with `Last-Event-ID` (see
    /// ``ServerSentEvents``); any 2xx but 204 is accepted.
    ///
    /// - Parameter request: A GET; its destination is replaced.
    /// - Returns: The events.
    public func events(_ request: TransferRequest) -> ServerSentEvents {
        ServerSentEvents { lastEventID in
            var connection = request
            let present = [HTTPField.Name.accept, .cacheControl].filter { request.head.headerFields[$0] != nil }
            try RequestOperationManager.prepareForEvents(&connection, lastEventID: lastEventID, keeping: present)
            let response = try await self.stream(connection)
            guard response.head.status.kind == .successful else {
                let body = try? await response.body.collect(upTo: RequestOperationManager.refusedBodyLimit)
                response.body.cancel()
                throw ResponseSerializationError(.unacceptableStatusCode(response.head.status.code), response: response.head,
                                                 body: body, url: response.url)
            }
            return response
        }
    }
}
