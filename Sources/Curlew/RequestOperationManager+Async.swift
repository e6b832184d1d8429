import CurlewOperations
import CurlewSerialization
import CurlewTransport
import Foundation
import HTTPTypes

/// async/await: typed values, validated by the manager's rules, cancelled with the task.
///
/// These methods run straight over the manager's transport — no `Operation`, no operation queue —
/// with everything else the manager promises: its request serializer, credentials and cookies (to
/// the base URL's origin only), security policy, retry policy and interceptor, logging and metrics;
/// a `StubTransport` (module `CurlewTesting`) answers them. Cancelling the awaiting task cancels the transfer at once,
/// exactly once, and the method throws the cancellation (`TransferError/Code/cancelled`);
/// ``shutdown()`` cancels every one of them. The operation queue's width does not limit them: the
/// engine's connection limits do (requests beyond `maximumConnectionsPerHost` wait in the engine).
///
/// **Values.** The body is decoded as the type asked for with the manager's ``decoder`` (a
/// `JSONDecoder`), after the status and content type are validated by the manager's
/// ``responseSerializer``'s rules (200–299 and JSON by default). Two types are special: `Data` is
/// the raw body, `String` the body as text (status validation only, any content type). `Empty` or an
/// `Optional` accepts a 204. For XML, property lists or any other format pass a `serializer:`.
///
/// **Headers** given to a call are added to (and replace the same names of) the serializer's
/// default headers, for that request only.
///
/// **Errors**: every error conforms to ``CurlewError``: `RequestSerializationError` (nothing was
/// sent), `TransferError` (the transfer failed or was cancelled), `ResponseSerializationError` (the
/// response was refused; it carries the status, head and body, and for a `Decodable` failure the
/// coding path).
extension RequestOperationManager {
    // MARK: Verbs

    /// GETs `path` and decodes the response as `type`.
    ///
    /// ```swift
    /// let user = try await api.get("users/1", as: User.self)
    /// let page = try await api.get("search", parameters: ["q": query, "page": page], as: Found.self)
    /// let fresh = try await api.get("items/1", headers: ["If-None-Match": tag], as: Item.self)
    /// let text = try await api.get("robots.txt", as: String.self)
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters for the query string, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - type: What to decode (`Data` for the raw body, `String` for text).
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func get<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.get, path, parameters: Self.encodable(parameters), headers: headers, as: type)
    }

    /// GETs with parameters of mixed types, `["q": query, "page": page]`, and decodes the response.
    public func get<Value: Decodable & Sendable>(
        _ path: String, parameters: [String: any ParameterConvertible], headers: [String: String] = [:],
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.get, path, parameters: ParameterValue(parameters), headers: headers, as: type)
    }

    /// GETs `path` with `Encodable` parameters (the query string) and decodes the response.
    public func get<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.get, path, parameters: parameters, headers: headers, as: type)
    }

    /// GETs `path` and turns the response into a value with `serializer`: XML, a property list, or a
    /// format of your own.
    ///
    /// ```swift
    /// let feed = try await api.get("feed.xml", serializer: XMLResponseSerializer())
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters for the query string, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - serializer: Validates the response and makes the value.
    /// - Returns: The serializer's value.
    /// - Throws: See the extension's discussion; the serializer's own errors.
    public func get<Serializer: ResponseSerializer>(
        _ path: String, parameters: [String: any ParameterConvertible]? = nil, headers: [String: String] = [:], serializer: Serializer
    ) async throws -> Serializer.Output {
        try await self.send(.get, path, parameters: parameters, headers: headers, serializer: serializer)
    }

    /// POSTs `parameters` (the body, as the request serializer writes it) and decodes the response.
    ///
    /// ```swift
    /// let created = try await api.post("users", parameters: NewUser(name: "Ada"), as: User.self)
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters for the body, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - type: What to decode.
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func post<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.post, path, parameters: Self.encodable(parameters), headers: headers, as: type)
    }

    /// POSTs with parameters of mixed types, `["q": query, "page": page]`, and decodes the response.
    public func post<Value: Decodable & Sendable>(
        _ path: String, parameters: [String: any ParameterConvertible], headers: [String: String] = [:],
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.post, path, parameters: ParameterValue(parameters), headers: headers, as: type)
    }

    /// POSTs `Encodable` parameters and decodes the response.
    public func post<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.post, path, parameters: parameters, headers: headers, as: type)
    }

    /// PUTs `parameters` and decodes the response.
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters for the body, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - type: What to decode.
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func put<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.put, path, parameters: Self.encodable(parameters), headers: headers, as: type)
    }

    /// PUTs with parameters of mixed types, `["q": query, "page": page]`, and decodes the response.
    public func put<Value: Decodable & Sendable>(
        _ path: String, parameters: [String: any ParameterConvertible], headers: [String: String] = [:],
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.put, path, parameters: ParameterValue(parameters), headers: headers, as: type)
    }

    /// PUTs `Encodable` parameters and decodes the response.
    public func put<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.put, path, parameters: parameters, headers: headers, as: type)
    }

    /// PATCHes with `parameters` and decodes the response.
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters for the body, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - type: What to decode.
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func patch<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.patch, path, parameters: Self.encodable(parameters), headers: headers, as: type)
    }

    /// PATCHes with parameters of mixed types, `["q": query, "page": page]`, and decodes the response.
    public func patch<Value: Decodable & Sendable>(
        _ path: String, parameters: [String: any ParameterConvertible], headers: [String: String] = [:],
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.patch, path, parameters: ParameterValue(parameters), headers: headers, as: type)
    }

    /// PATCHes with `Encodable` parameters and decodes the response.
    public func patch<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.patch, path, parameters: parameters, headers: headers, as: type)
    }

    /// DELETEs `path` and decodes the response (`Empty` for a 204).
    ///
    /// ```swift
    /// _ = try await api.delete("users/1", as: Empty.self)
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters for the query string, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - type: What to decode.
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func delete<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.delete, path, parameters: Self.encodable(parameters), headers: headers, as: type)
    }

    /// DELETEs with parameters of mixed types, `["q": query, "page": page]`, and decodes the response.
    public func delete<Value: Decodable & Sendable>(
        _ path: String, parameters: [String: any ParameterConvertible], headers: [String: String] = [:],
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.delete, path, parameters: ParameterValue(parameters), headers: headers, as: type)
    }

    /// DELETEs with `Encodable` parameters and decodes the response.
    public func delete<Value: Decodable & Sendable>(
        _ path: String, parameters: some Encodable & Sendable, headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await self.value(.delete, path, parameters: parameters, headers: headers, as: type)
    }

    /// Sends HEAD to `path` and returns the response head, once its status is acceptable.
    ///
    /// ```swift
    /// let head = try await api.head("files/report.pdf")
    /// print(head.headerFields[.contentLength] ?? "?")
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters for the query string, or `nil`.
    ///   - headers: Header fields for this request only.
    /// - Returns: The response head.
    /// - Throws: See the extension's discussion.
    public func head(_ path: String, parameters: [String: any ParameterConvertible]? = nil, headers: [String: String] = [:]) async throws -> HTTPResponse {
        try await self.response(.head, path, parameters: parameters, headers: headers, as: Data.self).response.head
    }

    /// Sends OPTIONS to `path` and returns the response head (its `Allow` field, say), once its
    /// status is acceptable.
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL (`"*"` is not supported: use a path).
    ///   - headers: Header fields for this request only.
    /// - Returns: The response head.
    /// - Throws: See the extension's discussion.
    public func options(_ path: String, headers: [String: String] = [:]) async throws -> HTTPResponse {
        try await self.response(.options, path, headers: headers, as: Data.self).response.head
    }

    // MARK: Any method

    /// Sends `method` to `path` and returns the decoded value with the response it came from:
    /// status, headers, URL and timings.
    ///
    /// ```swift
    /// let reply = try await api.response(.get, "users/1", as: User.self)
    /// print(reply.value.name, reply.status.code, reply.headers["X-Request-Id"] ?? "-")
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method; it decides where parameters go.
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - type: What to decode (`Data` for the raw body, `String` for text).
    /// - Returns: The value and its response.
    /// - Throws: See the extension's discussion.
    public func response<Value: Decodable & Sendable>(
        _ method: HTTPRequest.Method, _ path: String, parameters: [String: any ParameterConvertible]? = nil,
        headers: [String: String] = [:], as type: Value.Type = Value.self
    ) async throws -> DecodedResponse<Value> {
        let request = try self.request(method, path, parameters: Self.encodable(parameters), headers: headers)
        return try await self.response(for: request, as: type, run: RequestRun())
    }

    /// Sends `method` to `path` and turns the response into a value with `serializer`.
    ///
    /// - Parameters:
    ///   - method: The method; it decides where parameters go.
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - serializer: Validates the response and makes the value.
    /// - Returns: The serializer's value.
    /// - Throws: See the extension's discussion; the serializer's own errors.
    public func send<Serializer: ResponseSerializer>(
        _ method: HTTPRequest.Method, _ path: String, parameters: [String: any ParameterConvertible]? = nil,
        headers: [String: String] = [:], serializer: Serializer
    ) async throws -> Serializer.Output {
        let request = try self.request(method, path, parameters: Self.encodable(parameters), headers: headers)
        return try await self.perform(request) { response in
            try await self.serialize(response, with: serializer, method: method)
        }
    }

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
    ///   - parameters: Parameters, or `nil`.
    ///   - headers: Header fields for this request only.
    /// - Returns: The body and the response (head, URL, timings).
    /// - Throws: See the extension's discussion.
    public func data(
        _ method: HTTPRequest.Method, _ path: String, parameters: [String: any ParameterConvertible]? = nil,
        headers: [String: String] = [:]
    ) async throws -> (Data, TransferResponse) {
        let reply = try await self.response(method, path, parameters: parameters, headers: headers, as: Data.self)
        return (reply.value, reply.response)
    }

    // MARK: Requests you built

    /// Sends `request` (prepared as the manager sends it) and decodes the response as `type`.
    ///
    /// ```swift
    /// var request = try api.request(.get, "exports/latest")
    /// request.options.maximumDownloadBytesPerSecond = 1 << 20
    /// let data = try await api.value(for: request, as: Data.self)
    /// ```
    ///
    /// - Parameters:
    ///   - request: Any request, for example one from ``request(_:_:parameters:)-(_,_,Parameters?)``
    ///     with options changed.
    ///   - type: What to decode (`Data` for the raw body, `String` for text).
    /// - Returns: The decoded value.
    /// - Throws: See the extension's discussion.
    public func value<Value: Decodable & Sendable>(for request: TransferRequest, as type: Value.Type = Value.self) async throws -> Value {
        try await self.response(for: request, as: type).value
    }

    /// Sends `request` (prepared as the manager sends it) and returns the decoded value with its
    /// response.
    ///
    /// - Parameters:
    ///   - request: Any request.
    ///   - type: What to decode (`Data` for the raw body, `String` for text).
    /// - Returns: The value and its response.
    /// - Throws: See the extension's discussion.
    public func response<Value: Decodable & Sendable>(for request: TransferRequest, as type: Value.Type = Value.self) async throws -> DecodedResponse<Value> {
        let snapshot = self.snapshot
        return try await self.response(for: self.prepared(request, with: snapshot), as: type, run: RequestRun(),
                                       snapshot: snapshot)
    }

    // MARK: Building blocks

    /// The value of one request built from `method`, `path`, `parameters` and `headers`.
    func value<Value: Decodable & Sendable>(
        _ method: HTTPRequest.Method, _ path: String, parameters: (any Encodable & Sendable)?, headers: [String: String],
        as type: Value.Type
    ) async throws -> Value {
        let request = try self.request(method, path, parameters: parameters, headers: headers)
        return try await self.response(for: request, as: type, run: RequestRun()).value
    }

    /// Sends a prepared request with `run` and decodes its response: in this task, or on a processing
    /// queue when the body is large.
    func response<Value: Decodable & Sendable>(
        for prepared: TransferRequest, as type: Value.Type, run: RequestRun, snapshot: Settings.Snapshot? = nil
    ) async throws -> DecodedResponse<Value> {
        let snapshot = snapshot ?? self.snapshot
        let method = prepared.head.method
        return try await self.perform(prepared, run: run, snapshot: snapshot) { response in
            let value: Value
            if let body = response.body, body.count >= Self.largeBody {
                value = try await Self.offloaded { try Self.decode(response, as: type, method: method, snapshot: snapshot) }
            } else {
                value = try Self.decode(response, as: type, method: method, snapshot: snapshot)
            }
            return DecodedResponse(value: value, response: response)
        }
    }

    /// A request with `headers` added to the serializer's (replacing fields of the same names).
    ///
    /// - Throws: As ``request(_:_:parameters:)-8769d``; `TransferError/Code/invalidRequest` for a
    ///   header name or value that is not valid.
    func request(
        _ method: HTTPRequest.Method, _ path: String, parameters: (any Encodable & Sendable)?, headers: [String: String]
    ) throws -> TransferRequest {
        var request = try self.request(method, path, parameters: parameters)
        guard !headers.isEmpty else { return request }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            try request.setHeaderField(name, value: value)
        }
        return request
    }

    /// Parameters as the serializers take them.
    static func encodable(_ parameters: [String: any ParameterConvertible]?) -> (any Encodable & Sendable)? {
        parameters.map(ParameterValue.init)
    }

    /// `type` decoded from `response`: the raw body for `Data`, text for `String`, the manager's
    /// decoder otherwise, after the manager's validation.
    static func decode<Value: Decodable & Sendable>(
        _ response: TransferResponse, as type: Value.Type, method: HTTPRequest.Method, snapshot: Settings.Snapshot
    ) throws -> Value {
        let validation = snapshot.validation
        if Value.self == Data.self,
           let body = try validation.bodySerializer.serialize(response: response.head, body: response.body, url: response.url) as? Value {
            return body
        }
        if Value.self == String.self {
            var text = StringResponseSerializer()
            text.acceptableStatusCodes = validation.bodySerializer.acceptableStatusCodes
            if let string = try text.serialize(response: response.head, body: response.body, url: response.url,
                                               requestMethod: method) as? Value {
                return string
            }
        }
        var serializer = DecodableResponseSerializer<Value>(decoder: snapshot.decoder)
        if let (statusCodes, contentTypes) = validation.rules {
            serializer.acceptableStatusCodes = statusCodes
            serializer.acceptableContentTypes = contentTypes
        }
        return try serializer.serialize(response: response.head, body: response.body, url: response.url, requestMethod: method)
    }
}

/// A value decoded from a response, with the response: status, headers, URL and timings.
public struct DecodedResponse<Value: Sendable>: Sendable {
    /// The decoded value.
    public var value: Value
    /// The response it was decoded from (its `body` is the raw bytes, when in memory).
    public var response: TransferResponse

    /// Creates one; the manager makes these.
    public init(value: Value, response: TransferResponse) {
        self.value = value
        self.response = response
    }

    /// The response's status.
    public var status: HTTPResponse.Status { self.response.head.status }
    /// The response's header fields; read one by name with `headers["X-Request-Id"]`.
    public var headers: HTTPFields { self.response.head.headerFields }
    /// The URL the response came from (after redirects).
    public var url: URL { self.response.url }
    /// Protocol, redirects, retries and timings.
    public var metrics: TransferMetrics { self.response.metrics }
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
