import CurlewOperations
import CurlewSerialization
import CurlewTransport
import HTTPTypes

/// The AFNetworking-style methods: each builds a request, enqueues a `RequestOperation` on the
/// manager's `operationQueue` and returns it; the handlers run once, on the completion queue.
///
/// `success` receives the operation and what the manager's `responseSerializer` made of the
/// response (a `JSONValue` by default); `failure` receives the operation and the error — a
/// `TransferError` (cancellation included), or the serializer's `ResponseSerializationError` for
/// a response it refused. When the request cannot even be built (bad parameters, a path that makes
/// no URL), nothing is enqueued, the method returns `nil`, and `failure` runs with no operation,
/// asynchronously, as in AFNetworking.
///
/// Parameters are a literal (`["page": 2]`), a dictionary mixing variables (`["q": query, "page": page]`)
/// or any `Encodable & Sendable` value.
extension RequestOperationManager {
    /// What every AFNetworking-style method calls when the request succeeded: the operation and its
    /// response object (what the serializer made of the response).
    public typealias SuccessHandler = @Sendable (RequestOperation, (any Sendable)?) -> Void
    /// What every AFNetworking-style method calls when the request failed: the operation (`nil` when
    /// the request could not even be built, so nothing was sent) and the error.
    public typealias FailureHandler = @Sendable (RequestOperation?, any Error) -> Void

    /// Enqueues a GET; parameters go into the query string.
    ///
    /// ```swift
    /// api.GET("users", parameters: ["page": 2], success: { _, object in
    ///     let users = object as? JSONValue
    /// }, failure: { _, error in print(error) })
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL (see ``url(for:)``).
    ///   - parameters: Literal parameters, or `nil`.
    ///   - success: Receives the operation and its response object.
    ///   - failure: Receives the operation (`nil` when nothing was sent) and the error.
    /// - Returns: The enqueued operation, or `nil` when the request could not be built.
    @discardableResult
    public func GET(
        _ path: String, parameters: Parameters? = nil,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.get, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a GET with parameters of mixed types, `["q": query, "page": page]`.
    @discardableResult
    public func GET(
        _ path: String, parameters: [String: any ParameterConvertible],
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.get, path, parameters: ParameterValue(parameters), success: success, failure: failure)
    }

    /// Enqueues a GET with `Encodable` parameters.
    @discardableResult
    public func GET(
        _ path: String, parameters: some Encodable & Sendable,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.get, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a HEAD; the operation's `response` has the head (the response object is what the
    /// serializer made of an empty body, usually `nil`).
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters (query string), or `nil`.
    ///   - success: Receives the operation and its response object.
    ///   - failure: Receives the operation (`nil` when nothing was sent) and the error.
    /// - Returns: The enqueued operation, or `nil` when the request could not be built.
    @discardableResult
    public func HEAD(
        _ path: String, parameters: Parameters? = nil,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.head, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a HEAD with parameters of mixed types, `["q": query]`.
    @discardableResult
    public func HEAD(
        _ path: String, parameters: [String: any ParameterConvertible],
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.head, path, parameters: ParameterValue(parameters), success: success, failure: failure)
    }

    /// Enqueues a POST; parameters become the body as the request serializer writes it.
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters, or `nil`.
    ///   - success: Receives the operation and its response object.
    ///   - failure: Receives the operation (`nil` when nothing was sent) and the error.
    /// - Returns: The enqueued operation, or `nil` when the request could not be built.
    @discardableResult
    public func POST(
        _ path: String, parameters: Parameters? = nil,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.post, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a POST with parameters of mixed types, `["q": query, "page": page]`.
    @discardableResult
    public func POST(
        _ path: String, parameters: [String: any ParameterConvertible],
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.post, path, parameters: ParameterValue(parameters), success: success, failure: failure)
    }

    /// Enqueues a POST with `Encodable` parameters.
    @discardableResult
    public func POST(
        _ path: String, parameters: some Encodable & Sendable,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.post, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a PUT; parameters become the body.
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters, or `nil`.
    ///   - success: Receives the operation and its response object.
    ///   - failure: Receives the operation (`nil` when nothing was sent) and the error.
    /// - Returns: The enqueued operation, or `nil` when the request could not be built.
    @discardableResult
    public func PUT(
        _ path: String, parameters: Parameters? = nil,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.put, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a PUT with parameters of mixed types, `["q": query, "page": page]`.
    @discardableResult
    public func PUT(
        _ path: String, parameters: [String: any ParameterConvertible],
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.put, path, parameters: ParameterValue(parameters), success: success, failure: failure)
    }

    /// Enqueues a PUT with `Encodable` parameters.
    @discardableResult
    public func PUT(
        _ path: String, parameters: some Encodable & Sendable,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.put, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a PATCH; parameters become the body.
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters, or `nil`.
    ///   - success: Receives the operation and its response object.
    ///   - failure: Receives the operation (`nil` when nothing was sent) and the error.
    /// - Returns: The enqueued operation, or `nil` when the request could not be built.
    @discardableResult
    public func PATCH(
        _ path: String, parameters: Parameters? = nil,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.patch, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a PATCH with parameters of mixed types, `["q": query, "page": page]`.
    @discardableResult
    public func PATCH(
        _ path: String, parameters: [String: any ParameterConvertible],
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.patch, path, parameters: ParameterValue(parameters), success: success, failure: failure)
    }

    /// Enqueues a PATCH with `Encodable` parameters.
    @discardableResult
    public func PATCH(
        _ path: String, parameters: some Encodable & Sendable,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.patch, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a DELETE; parameters go into the query string (the serializers' default).
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Literal parameters, or `nil`.
    ///   - success: Receives the operation and its response object.
    ///   - failure: Receives the operation (`nil` when nothing was sent) and the error.
    /// - Returns: The enqueued operation, or `nil` when the request could not be built.
    @discardableResult
    public func DELETE(
        _ path: String, parameters: Parameters? = nil,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.delete, path, parameters: parameters, success: success, failure: failure)
    }

    /// Enqueues a DELETE with parameters of mixed types, `["q": query, "page": page]`.
    @discardableResult
    public func DELETE(
        _ path: String, parameters: [String: any ParameterConvertible],
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.delete, path, parameters: ParameterValue(parameters), success: success, failure: failure)
    }

    /// Enqueues a DELETE with `Encodable` parameters.
    @discardableResult
    public func DELETE(
        _ path: String, parameters: some Encodable & Sendable,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        self.send(.delete, path, parameters: parameters, success: success, failure: failure)
    }

    /// Builds, makes and enqueues; on a build failure reports to `failure` and returns `nil`.
    func send(
        _ method: HTTPRequest.Method, _ path: String, parameters: (any Encodable & Sendable)?,
        success: SuccessHandler?,
        failure: FailureHandler?
    ) -> RequestOperation? {
        let request: TransferRequest
        do {
            request = try self.request(method, path, parameters: parameters)
        } catch {
            self.reportUnsentFailure(error, to: failure)
            return nil
        }
        return self.enqueue(request, serializer: nil, success: success, failure: failure)
    }

    /// Makes an operation for a prepared request and enqueues it.
    func enqueue(
        _ request: TransferRequest, serializer: (any ResponseSerializer)?,
        success: SuccessHandler?,
        failure: FailureHandler?
    ) -> RequestOperation {
        let operation = self.makeOperation(request, serializer: serializer, success: success, failure: failure)
        self.operationQueue.addOperation(operation)
        return operation
    }
}
