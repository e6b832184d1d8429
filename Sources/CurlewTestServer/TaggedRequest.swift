/// What a ``TestServer`` saw of one request that carried the ``TestServer/tagHeaderName`` header: what
/// was asked, what was answered, and whether the client stayed for the whole answer.
///
/// Tests tag a request with a value of their own (a UUID) and read its record with
/// ``TestServer/requests(tagged:)``, so the record is theirs even while other tests share the server:
///
/// ```swift
/// var request = TransferRequest(url: server.url(.delay(120_000)))
/// request.head.headerFields[HTTPField.Name(TestServer.tagHeaderName)!] = tag
/// // … start it, cancel it …
/// #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned })
/// ```
public struct TaggedRequest: Sendable, Hashable {
    /// How far the server got with the response.
    public enum Outcome: Sendable, Hashable {
        /// The response is still being written or waited for (a `.delay`, a drip).
        case answering
        /// The whole response was handed to the connection.
        case answered
        /// The connection (or HTTP/2 stream) closed before the response was complete: the client gave
        /// up on it, for example because the transfer was cancelled or paused.
        case abandoned
        /// The server cut the response short on purpose (`.closeMidBody`, `.reset`).
        case cutShort
    }

    /// The request method, e.g. `"GET"`.
    public var method: String
    /// The request target as sent, e.g. `"/entity/1000?drip=100"`.
    public var target: String
    /// The `Range` header, if any.
    public var range: String?
    /// The `If-Range` header, if any.
    public var ifRange: String?
    /// The status of the response head, once it was written.
    public var status: Int?
    /// How far the response got.
    public var outcome: Outcome

    /// Creates a record (the server makes them; public for tests that build expectations).
    public init(method: String, target: String, range: String? = nil, ifRange: String? = nil, status: Int? = nil,
                outcome: Outcome = .answering) {
        self.method = method
        self.target = target
        self.range = range
        self.ifRange = ifRange
        self.status = status
        self.outcome = outcome
    }
}
