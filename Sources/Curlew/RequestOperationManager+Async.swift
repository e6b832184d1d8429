import CurlewOperations
import CurlewSerialization
import CurlewTransport
import Foundation
import HTTPTypes

/// async/await: typed values, validation by the manager's rules, cancellation with the task.
///
/// Every method runs a `RequestOperation` on the manager's `operationQueue`, so its width,
/// pausing and the manager's shutdown apply. Cancelling the awaiting task cancels the operation
/// and its transfer at once, exactly once, and the method throws the cancellation error.
///
/// The body is decoded with the manager's `decoder` (a `JSONDecoder`), after validation with the
/// manager's `responseSerializer`'s acceptable status codes and content types (200–299 and JSON by
/// default). Ask for `Data` to get the raw body (status validation only), for `Empty` or an
/// `Optional` when a 204 may answer.
///
/// **Errors**: `RequestSerializationError` (nothing was sent), `TransferError` (the transfer
/// failed or was cancelled), `ResponseSerializationError` (the response was refused; it carries
/// the status, head and body, and for a `Decodable` failure the coding path).
extension RequestOperationManager {
    // MARK: Verbs

    /// GETs `path` and decodes the response as `type`.
    ///
    /// ```swift
    /// let user = try await api.get("users/1", as: User.self)
    /// let page = try await api.get("users", parameters: ["page": 2], as: [User].self)
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters for the query string, or `nil`.
    ///   - type: What to decode.
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func get<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.dataTask(.get, path, parameters: parameters, as: type).value
    }

    /// GETs `path` with `Encodable` parameters (the query string) and decodes the response.
    public func get<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.task(.get, path, parameters: parameters, as: type).value
    }

    /// POSTs `parameters` (the body, as the request serializer writes it) and decodes the response.
    ///
    /// ```swift
    /// let created = try await api.post("users", parameters: NewUser(name: "Ada"), as: User.self)
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters, or `nil`.
    ///   - type: What to decode.
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func post<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.dataTask(.post, path, parameters: parameters, as: type).value
    }

    /// POSTs `Encodable` parameters and decodes the response.
    public func post<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.task(.post, path, parameters: parameters, as: type).value
    }

    /// PUTs `parameters` and decodes the response.
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters, or `nil`.
    ///   - type: What to decode.
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func put<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.dataTask(.put, path, parameters: parameters, as: type).value
    }

    /// PUTs `Encodable` parameters and decodes the response.
    public func put<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.task(.put, path, parameters: parameters, as: type).value
    }

    /// PATCHes with `parameters` and decodes the response.
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters, or `nil`.
    ///   - type: What to decode.
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func patch<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.dataTask(.patch, path, parameters: parameters, as: type).value
    }

    /// PATCHes with `Encodable` parameters and decodes the response.
    public func patch<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.task(.patch, path, parameters: parameters, as: type).value
    }

    /// DELETEs `path` and decodes the response (`Empty` for a 204).
    ///
    /// ```swift
    /// _ = try await api.delete("users/1", as: Empty.self)
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters for the query string, or `nil`.
    ///   - type: What to decode.
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func delete<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.dataTask(.delete, path, parameters: parameters, as: type).value
    }

    /// DELETEs with `Encodable` parameters and decodes the response.
    public func delete<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.task(.delete, path, parameters: parameters, as: type).value
    }

    // MARK: Raw bodies and files

    /// Sends `method` to `path` and returns the body undecoded, with the response.
    ///
    /// The status is still validated (200–299 unless the manager's serializer says otherwise); the
    /// content type is not.
    ///
    /// ```swift
    /// let (data, response) = try await api.data(.get, "raw")
    /// print(response.head.status, response.metrics.total)
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters, or `nil`.
    /// - Returns: The body and the response (head, URL, timings).
    /// - Throws: See the extension's discussion.
    public func data(_ method: HTTPRequest.Method, _ path: String, parameters: Parameters? = nil) async throws -> (Data, TransferResponse) {
        try await self.dataTask(method, path, parameters: parameters, as: Data.self).valueAndResponse
    }

    /// Downloads `path` into the file at `destination`, streamed (never held in memory).
    ///
    /// The body goes to a temporary file beside `destination`, which replaces it only when the
    /// download succeeds. A response whose status is refused fails with
    /// `ResponseSerializationError` (its body's first bytes attached); it, and any other failure —
    /// a transfer error, a cancel, a full disk — leaves `destination` as it was: absent, or with
    /// its old bytes.
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
    ///   - parameters: Literal parameters for the query string, or `nil`.
    ///   - progress: Called with the download's progress (coalesced, on the operation's progress
    ///     queue), or `nil`.
    /// - Returns: The response; its `fileURL` is `destination`.
    /// - Throws: See the extension's discussion.
    @discardableResult
    public func download(
        _ path: String, to destination: URL, parameters: Parameters? = nil,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> TransferResponse {
        var request = try self.request(.get, path, parameters: parameters)
        request.destination = .file(destination)
        let task: RequestTask<Data> = self.task(for: request, serializer: self.bodySerializer(), progress: progress)
        return try await task.valueAndResponse.1
    }

    // MARK: Tasks

    /// Enqueues a request and returns a handle to control and await it.
    ///
    /// ```swift
    /// let task = api.dataTask(.get, "big", as: Data.self)
    /// task.pause(); task.resume()
    /// let data = try await task.value
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters, or `nil`.
    ///   - type: What to decode (`Data` for the raw body).
    /// - Returns: The task; if the request cannot be built, its ``RequestTask/value`` throws why.
    public func dataTask<Value: Decodable & Sendable>(
        _ method: HTTPRequest.Method, _ path: String, parameters: Parameters? = nil, as type: Value.Type = Value.self
    ) -> RequestTask<Value> {
        self.task(method, path, parameters: parameters.map { $0 as any Encodable & Sendable }, as: type)
    }

    /// Enqueues `request` (prepared as the manager sends it) and returns a handle to it.
    ///
    /// - Parameters:
    ///   - request: Any request, for example one from ``request(_:_:parameters:)-(_,_,Parameters?)``
    ///     with options changed.
    ///   - type: What to decode (`Data` for the raw body).
    /// - Returns: The task.
    public func task<Value: Decodable & Sendable>(for request: TransferRequest, as type: Value.Type = Value.self) -> RequestTask<Value> {
        self.task(for: self.prepared(request), serializer: self.serializer(for: type), progress: nil)
    }

    /// Sends `request` (prepared as the manager sends it) and decodes the response as `type`.
    ///
    /// - Parameters:
    ///   - request: Any request.
    ///   - type: What to decode (`Data` for the raw body).
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func value<Value: Decodable & Sendable>(for request: TransferRequest, as type: Value.Type = Value.self) async throws -> Value {
        try await self.task(for: request, as: type).value
    }

    /// A task for `method` and `path` with any parameters.
    func task<Value: Decodable & Sendable>(
        _ method: HTTPRequest.Method, _ path: String, parameters: (any Encodable & Sendable)?, as type: Value.Type
    ) -> RequestTask<Value> {
        do {
            let request = try self.request(method, path, parameters: parameters)
            return self.task(for: request, serializer: self.serializer(for: type), progress: nil)
        } catch {
            return RequestTask(failure: error)
        }
    }

    /// Enqueues a prepared request with `serializer`.
    func task<Value: Sendable>(
        for request: TransferRequest, serializer: any ResponseSerializer, progress: (@Sendable (TransferProgress) -> Void)?
    ) -> RequestTask<Value> {
        let operation = self.makeOperation(request, serializer: serializer, success: nil, failure: nil)
        operation.downloadProgressHandler = progress
        self.operationQueue.addOperation(operation)
        return RequestTask(operation: operation)
    }

    // MARK: Serializers

    /// The serializer for a typed value: the raw body for `Data`, else a `DecodableResponseSerializer`
    /// with the manager's decoder and validation.
    func serializer<Value: Decodable & Sendable>(for type: Value.Type) -> any ResponseSerializer {
        let (validation, decoder) = self.settings.withLock { ($0.validation, $0.decoder) }
        if Value.self == Data.self { return validation.bodySerializer }
        var serializer = DecodableResponseSerializer<Value>(decoder: decoder)
        if let (statusCodes, contentTypes) = validation.rules {
            serializer.acceptableStatusCodes = statusCodes
            serializer.acceptableContentTypes = contentTypes
        }
        return serializer
    }

    /// The raw body, with the manager's status codes.
    func bodySerializer() -> ValidatedBodySerializer {
        self.settings.withLock { $0.validation.bodySerializer }
    }
}

/// What the typed async methods take from the manager's response serializer, read once when the
/// serializer is set rather than with a dynamic cast for every request.
struct ResponseValidation: Sendable {
    /// The acceptable status codes and content types of a validating serializer; `nil` for another
    /// kind, whose rules the typed methods do not take.
    let rules: (statusCodes: IndexSet, contentTypes: Set<String>?)?
    /// The raw-body serializer with those status codes (200–299 without rules).
    let bodySerializer: ValidatedBodySerializer

    init(_ serializer: any ResponseSerializer) {
        var body = ValidatedBodySerializer()
        if let validating = serializer as? any ValidatingResponseSerializer {
            self.rules = (validating.acceptableStatusCodes, validating.acceptableContentTypes)
            body.acceptableStatusCodes = validating.acceptableStatusCodes
        } else {
            self.rules = nil
        }
        self.bodySerializer = body
    }
}

/// The body as `Data` (empty when there is none or it went to a file), after status validation;
/// any content type.
struct ValidatedBodySerializer: ValidatingResponseSerializer {
    var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
    var acceptableContentTypes: Set<String>?

    func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> Data {
        try self.validate(response: response, body: body, url: url)
        return body ?? Data()
    }
}
