import CurlewOperations
import CurlewSerialization
import CurlewTransport
import HTTPTypes

/// Multipart uploads: AFNetworking's `POST:parameters:constructingBodyWithBlock:success:failure:`,
/// and its async counterpart. File parts stream from disk as curl sends them.
extension RequestOperationManager {
    /// A `multipart/form-data` request: the parameters as plain fields first, then whatever
    /// `constructingBody` appends.
    ///
    /// ```swift
    /// let request = try api.multipartRequest("upload", parameters: ["kind": "log"]) { form in
    ///     try form.append(fileAt: logURL, name: "file")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - method: Any method but GET and HEAD; POST by default.
    ///   - path: Resolved against the base URL.
    ///   - parameters: Fields, named as a query string names them (`a[b]`, `a[]`), or `nil`.
    ///   - constructingBody: Appends parts to the form.
    /// - Returns: The request, prepared as the manager sends it.
    /// - Throws: `TransferError/Code/badURL` for the path; `RequestSerializationError` for the
    ///   parameters, a file that cannot be read, or GET/HEAD; whatever `constructingBody` throws.
    public func multipartRequest(
        _ method: HTTPRequest.Method = .post, _ path: String, parameters: (any Encodable & Sendable)?,
        constructingBody: (inout MultipartFormData) throws -> Void
    ) throws -> TransferRequest {
        let url = try self.url(for: path)
        var form = MultipartFormData()
        if let parameters {
            try form.append(parameters: parameters)
        }
        try constructingBody(&form)
        let (serializer, options) = self.settings.withLock { ($0.requestSerializer, $0.transferOptions) }
        var request = try serializer.multipartRequest(method: method, url: url, form: form)
        let serializerTimeout = request.options.timeout
        request.options = options
        if options.timeout == nil { request.options.timeout = serializerTimeout }
        return self.prepared(request)
    }

    /// Enqueues a multipart POST.
    ///
    /// ```swift
    /// api.POST("upload", parameters: ["kind": "log"], constructingBody: { form in
    ///     try form.append(fileAt: logURL, name: "file")
    /// }, success: { _, object in print(object ?? "") }, failure: { _, error in print(error) })
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Plain fields, or `nil`.
    ///   - constructingBody: Appends parts to the form.
    ///   - success: Receives the operation and its response object.
    ///   - failure: Receives the operation (`nil` when nothing was sent) and the error.
    /// - Returns: The enqueued operation, or `nil` when the request could not be built.
    @discardableResult
    public func POST(
        _ path: String, parameters: Parameters? = nil,
        constructingBody: (inout MultipartFormData) throws -> Void,
        success: SuccessHandler? = nil,
        failure: FailureHandler? = nil
    ) -> RequestOperation? {
        let request: TransferRequest
        do {
            request = try self.multipartRequest(.post, path, parameters: parameters.map { $0 as any Encodable & Sendable },
                                                constructingBody: constructingBody)
        } catch {
            self.reportUnsentFailure(error, to: failure)
            return nil
        }
        return self.enqueue(request, serializer: nil, success: success, failure: failure)
    }

    /// Sends a multipart POST and decodes the response as `type`.
    ///
    /// ```swift
    /// let receipt = try await api.post("upload", constructingBody: { form in
    ///     try form.append(fileAt: photoURL, name: "photo")
    /// }, as: Receipt.self)
    /// ```
    ///
    /// - Parameters:
    ///   - path: Resolved against the base URL.
    ///   - parameters: Plain fields, or `nil`.
    ///   - constructingBody: Appends parts to the form.
    ///   - type: What to decode (`Data` for the raw body).
    /// - Returns: The decoded response.
    /// - Throws: As ``multipartRequest(_:_:parameters:constructingBody:)``, then as
    ///   ``value(for:as:)``.
    public func post<Value: Decodable & Sendable>(
        _ path: String, parameters: Parameters? = nil,
        constructingBody: (inout MultipartFormData) throws -> Void,
        as type: Value.Type = Value.self
    ) async throws -> Value {
        let request = try self.multipartRequest(.post, path, parameters: parameters.map { $0 as any Encodable & Sendable },
                                                constructingBody: constructingBody)
        return try await self.value(for: request, as: type)
    }
}
