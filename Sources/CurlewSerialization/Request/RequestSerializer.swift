import CurlewTransport
import Foundation
import HTTPTypes

/// Turns a method, a URL and parameters into a `TransferRequest`: AFNetworking's
/// `AFURLRequestSerialization`.
///
/// A serializer is a value you configure once (default headers, credentials, a timeout, the
/// encoding) and then share: every request it makes carries its defaults, unless the request
/// already has that header or timeout. Parameters are either a literal dictionary
/// (``Parameters``) or any `Encodable & Sendable` value.
///
/// ```swift
/// var serializer = JSONRequestSerializer()
/// try serializer.setBearerToken(token)
/// serializer.timeout = .seconds(30)
/// let request = try serializer.request(method: .post, url: url, parameters: ["name": "curlew", "tags": ["a"]])
/// let response = try await engine.execute(request)
/// ```
///
/// Curlew's serializers: ``HTTPRequestSerializer`` (query string or form body),
/// ``JSONRequestSerializer``, ``PropertyListRequestSerializer``; any of them makes multipart
/// requests from a ``MultipartFormData`` (``multipartRequest(method:url:form:)``).
///
/// To write one, store ``defaultHeaders``, ``secretHeaderNames`` and ``timeout``, implement
/// ``serialize(_:parameters:)`` and start it with ``applyingDefaults(to:)``;
/// ``request(method:url:parameters:)`` then comes for free.
public protocol RequestSerializer: Sendable {
    /// Header fields every request gets unless it already has a field of that name.
    ///
    /// Starts with `Accept-Language` (the process's preferred languages) and
    /// `User-Agent: Curlew/<version> (<os>)` (see ``StandardHeaders``). Prefer
    /// ``setValue(_:forHeader:)``, which refuses invalid names and values with an error; values
    /// assigned here directly are made legal by swift-http-types (CR, LF and NUL become spaces).
    var defaultHeaders: HTTPFields { get set }

    /// The names of the headers whose values are secrets, besides `Authorization`,
    /// `Proxy-Authorization` and `Cookie`, which always are. Empty by default; mark a header with
    /// ``setValue(_:forSecretHeader:)``.
    ///
    /// Every request the serializer makes lists them in `TransferOptions/secretHeaderNames`, so that
    /// they are dropped on a redirect to another origin and redacted from wire traces and
    /// `curlDescription`; a `RequestOperationManager` sends them only to its base URL's origin. A name
    /// stays secret when its value is replaced, by ``setValue(_:forHeader:)`` too, until it is
    /// removed from this set.
    var secretHeaderNames: Set<HTTPField.Name> { get set }

    /// The longest a whole transfer may take (`TransferOptions/timeout`), set on every request
    /// that has none. `nil` (the default) leaves the transfer's own defaults: connect and idle
    /// timeouts of 60 s, no total limit.
    var timeout: Duration? { get set }

    /// `request` with the serializer's defaults and `parameters` applied: AFNetworking's
    /// `requestBySerializingRequest:withParameters:error:`.
    ///
    /// - Parameters:
    ///   - request: The request to complete; its own headers and timeout win over the defaults.
    ///   - parameters: The parameters, or `nil` for none.
    /// - Returns: The complete request.
    /// - Throws: ``RequestSerializationError`` (Curlew's serializers), or the implementation's own error.
    func serialize(_ request: TransferRequest, parameters: (any Encodable & Sendable)?) throws -> TransferRequest

    /// A new request for `method` and `url`, with the defaults and `parameters` applied.
    ///
    /// The default implementation calls ``serialize(_:parameters:)`` with a plain request.
    ///
    /// - Parameters:
    ///   - method: The HTTP method; it decides where parameters go.
    ///   - url: An absolute `http` or `https` URL; a query it has is kept.
    ///   - parameters: The parameters, or `nil` for none.
    /// - Returns: The request, ready for `TransferEngine/execute(_:)` or a `RequestOperation`.
    /// - Throws: ``RequestSerializationError`` (Curlew's serializers), or the implementation's own error.
    func request(method: HTTPRequest.Method, url: URL, parameters: (any Encodable & Sendable)?) throws -> TransferRequest
}

extension RequestSerializer {
    public func request(method: HTTPRequest.Method, url: URL, parameters: (any Encodable & Sendable)?) throws -> TransferRequest {
        try self.serialize(TransferRequest(url: url, method: method), parameters: parameters)
    }

    /// A new request with literal parameters: `["q": "swift", "page": 2]`.
    ///
    /// - Parameters:
    ///   - method: The HTTP method; it decides where parameters go.
    ///   - url: An absolute `http` or `https` URL.
    ///   - parameters: The parameters.
    /// - Returns: The request.
    /// - Throws: As the `Encodable` overload: ``RequestSerializationError`` (Curlew's serializers), or
    ///   the implementation's own error.
    public func request(method: HTTPRequest.Method, url: URL, parameters: Parameters) throws -> TransferRequest {
        try self.request(method: method, url: url, parameters: parameters as any Encodable & Sendable)
    }

    /// `request` with the defaults and literal parameters applied: `["q": "swift", "page": 2]`.
    ///
    /// - Throws: As the `Encodable` overload: ``RequestSerializationError`` (Curlew's serializers), or
    ///   the implementation's own error.
    public func serialize(_ request: TransferRequest, parameters: Parameters) throws -> TransferRequest {
        try self.serialize(request, parameters: parameters as any Encodable & Sendable)
    }

    /// A new request without parameters, with the serializer's defaults applied.
    ///
    /// - Throws: As the overload with parameters: ``RequestSerializationError`` (Curlew's serializers),
    ///   or the implementation's own error.
    public func request(method: HTTPRequest.Method, url: URL) throws -> TransferRequest {
        try self.request(method: method, url: url, parameters: nil)
    }

    /// `request` with the default headers it lacks, the ``secretHeaderNames`` and, when it has
    /// none, the ``timeout``. Serializers start their ``serialize(_:parameters:)`` with this.
    public func applyingDefaults(to request: TransferRequest) -> TransferRequest {
        var request = request
        for field in self.defaultHeaders where request.head.headerFields[field.name] == nil {
            request.head.headerFields.append(field)
        }
        if !self.secretHeaderNames.isEmpty {
            request.options.secretHeaderNames.formUnion(self.secretHeaderNames)
        }
        if request.options.timeout == nil, let timeout = self.timeout {
            request.options.timeout = timeout
        }
        return request
    }

    // MARK: Headers

    /// Sets (or, with `nil`, removes) a default header, after checking it.
    ///
    /// ```swift
    /// try serializer.setValue("application/vnd.api+json", forHeader: "Accept")
    /// try serializer.setValue("a\r\nInjected: 1", forHeader: "X-Note")   // throws .invalidHeaderValue
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value; `nil` removes every field of that name.
    ///   - name: The field name, an HTTP token.
    /// - Throws: ``RequestSerializationError`` with ``RequestSerializationError/Code/invalidHeaderName``
    ///   or ``RequestSerializationError/Code/invalidHeaderValue`` (CR, LF, NUL or another character a
    ///   field value cannot hold, or leading or trailing whitespace).
    public mutating func setValue(_ value: String?, forHeader name: String) throws(RequestSerializationError) {
        let fieldName = try HeaderValidation.name(name)
        guard let value else {
            self.defaultHeaders[fieldName] = nil
            return
        }
        self.defaultHeaders[fieldName] = try HeaderValidation.value(value, of: name)
    }

    /// Sets (or, with `nil`, removes) a default header whose value is a secret — an API key, a
    /// session token — and marks its name as one of the ``secretHeaderNames``, after checking it.
    ///
    /// ```swift
    /// try serializer.setValue(apiKey, forSecretHeader: "X-API-Key")
    /// ```
    ///
    /// A `RequestOperationManager` then sends the header only to its base URL's origin, a redirect
    /// to another origin drops it, and logs show `<redacted>` instead of its value.
    ///
    /// - Parameters:
    ///   - value: The value; `nil` removes every field of that name (which stays secret).
    ///   - name: The field name, an HTTP token.
    /// - Throws: As ``setValue(_:forHeader:)``; nothing changes then.
    public mutating func setValue(_ value: String?, forSecretHeader name: String) throws(RequestSerializationError) {
        let fieldName = try HeaderValidation.name(name)
        try self.setValue(value, forHeader: name)
        self.secretHeaderNames.insert(fieldName)
    }

    /// Sends HTTP Basic credentials (`Authorization: Basic base64(username:password)`, RFC 7617,
    /// UTF-8) with every request that has no `Authorization` of its own.
    ///
    /// - Parameters:
    ///   - username: The user name; must not contain a colon.
    ///   - password: The password.
    /// - Throws: ``RequestSerializationError/Code/invalidHeaderValue`` when `username` contains a
    ///   colon (the server could not tell where it ends).
    public mutating func setAuthorization(username: String, password: String) throws(RequestSerializationError) {
        guard !username.contains(":") else {
            throw RequestSerializationError(.invalidHeaderValue, "A user name for Basic authentication cannot contain a colon.")
        }
        let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
        self.defaultHeaders[.authorization] = "Basic \(credentials)"
    }

    /// Sends `Authorization: Bearer <token>` (RFC 6750) with every request that has no
    /// `Authorization` of its own.
    ///
    /// - Parameter token: The token, as issued.
    /// - Throws: ``RequestSerializationError/Code/invalidHeaderValue`` when the token is empty or
    ///   contains characters a header cannot hold.
    public mutating func setBearerToken(_ token: String) throws(RequestSerializationError) {
        guard !token.isEmpty else {
            throw RequestSerializationError(.invalidHeaderValue, "A bearer token cannot be empty.")
        }
        self.defaultHeaders[.authorization] = try HeaderValidation.value("Bearer \(token)", of: "Authorization")
    }

    /// Stops sending credentials set with ``setAuthorization(username:password:)`` or
    /// ``setBearerToken(_:)``.
    public mutating func clearAuthorization() {
        self.defaultHeaders[.authorization] = nil
    }

    // MARK: Multipart

    /// A request whose body is `form`, streamed: AFNetworking's
    /// `multipartFormRequestWithMethod:URLString:parameters:constructingBodyWithBlock:error:`.
    ///
    /// The request gets `Content-Type: multipart/form-data; boundary=…` and a body of
    /// `RequestBody/parts(_:)` whose file parts are read from disk as curl sends them; curl
    /// announces the form's ``MultipartFormData/contentLength`` up front.
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// try form.append(parameters: ["title": "Holiday"])
    /// try form.append(fileAt: photoURL, name: "photo")           // image/jpeg, from the extension
    /// let request = try serializer.multipartRequest(url: uploadURL, form: form)
    /// ```
    ///
    /// - Parameters:
    ///   - method: Any method but GET and HEAD; POST by default.
    ///   - url: An absolute `http` or `https` URL.
    ///   - form: The parts.
    /// - Returns: The request, with the serializer's default headers and timeout.
    /// - Throws: ``RequestSerializationError/Code/invalidMethod`` for GET or HEAD.
    public func multipartRequest(
        method: HTTPRequest.Method = .post, url: URL, form: MultipartFormData
    ) throws(RequestSerializationError) -> TransferRequest {
        guard method != .get && method != .head else {
            throw RequestSerializationError(.invalidMethod, "A \(method.rawValue) request cannot carry a multipart form.")
        }
        var request = TransferRequest(url: url, method: method, body: form.body)
        request.head.headerFields[.contentType] = form.contentType
        return self.applyingDefaults(to: request)
    }
}

/// Checks header names and values before they become `HTTPField`s (which would quietly turn CR,
/// LF and NUL into spaces).
enum HeaderValidation {
    static func name(_ name: String) throws(RequestSerializationError) -> HTTPField.Name {
        guard let fieldName = HTTPField.Name(name) else {
            throw RequestSerializationError(.invalidHeaderName, "\"\(name)\" is not a valid header name.")
        }
        return fieldName
    }

    static func value(_ value: String, of name: String) throws(RequestSerializationError) -> String {
        if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw RequestSerializationError(.invalidHeaderValue, "The value of \(name) contains CR, LF or NUL.")
        }
        guard HTTPField.isValidValue(value) else {
            throw RequestSerializationError(
                .invalidHeaderValue,
                "The value of \(name) contains a control character or starts or ends with whitespace.")
        }
        return value
    }
}
