import CurlewTransport
import Foundation
import HTTPTypes

/// Puts parameters in the query string or in an `application/x-www-form-urlencoded` body:
/// AFNetworking's `AFHTTPRequestSerializer`.
///
/// For the methods in ``methodsEncodingParametersInURI`` (GET, HEAD and DELETE by default) the
/// parameters are appended to the URL's query (after `&` when it already has one). For any other
/// method they become the body, with `Content-Type: application/x-www-form-urlencoded` unless the
/// request has a content type. The encoding — sorted keys, `a[b]=c`, `a[]=1`, RFC 3986 escaping —
/// is ``formEncoder``'s.
///
/// ```swift
/// let serializer = HTTPRequestSerializer()
/// let search = try serializer.request(method: .get, url: url, parameters: ["q": "swift", "page": 2])
/// // GET …/search?page=2&q=swift
/// let login = try serializer.request(method: .post, url: url, parameters: Credentials(user: "a", password: "b"))
/// // POST, body "password=b&user=a"
/// ```
public struct HTTPRequestSerializer: RequestSerializer, Hashable {
    public var defaultHeaders: HTTPFields = StandardHeaders.fields
    public var secretHeaderNames: Set<HTTPField.Name> = []
    public var timeout: Duration?
    /// The methods whose parameters go into the URL's query rather than the body.
    public var methodsEncodingParametersInURI: Set<HTTPRequest.Method> = [.get, .head, .delete]
    /// How parameters are written as form text.
    public var formEncoder = URLEncodedFormEncoder()

    /// Creates a serializer with the standard headers and no timeout.
    public init() {}

    /// `request` with the defaults applied and `parameters` in its query or body.
    ///
    /// `nil` parameters leave the URL and body as they are.
    ///
    /// - Throws: ``RequestSerializationError`` with ``RequestSerializationError/Code/invalidParameters``
    ///   when the parameters cannot be form-encoded (see ``URLEncodedFormEncoder``).
    public func serialize(_ request: TransferRequest, parameters: (any Encodable & Sendable)?) throws(RequestSerializationError) -> TransferRequest {
        var request = self.applyingDefaults(to: request)
        guard let parameters else { return request }
        let query = try self.formEncoder.encode(parameters)
        if self.encodesParametersInURI(request.head.method) {
            request.appendQuery(query)
        } else {
            if request.head.headerFields[.contentType] == nil {
                request.head.headerFields[.contentType] = "application/x-www-form-urlencoded"
            }
            request.body = .data(Data(query.utf8))
        }
        return request
    }

    /// Whether parameters for `method` go into the URL.
    func encodesParametersInURI(_ method: HTTPRequest.Method) -> Bool {
        self.methodsEncodingParametersInURI.contains(method)
    }
}

extension TransferRequest {
    /// Appends `query` (already encoded) to the request's query; nothing when it is empty.
    mutating func appendQuery(_ query: String) {
        guard !query.isEmpty else { return }
        let path = self.head.path ?? "/"
        self.head.path = path + (path.contains("?") ? "&" : "?") + query
    }
}

extension HTTPRequestSerializer {
    /// `request` with the defaults applied and `parameters` in its query (for the URI methods) or
    /// encoded by `encode` as its body, with `Content-Type: contentType` unless it has one: the shared
    /// work of the JSON and property-list serializers.
    func serialize(
        _ request: TransferRequest,
        parameters: (any Encodable & Sendable)?,
        asBodyOfType contentType: String,
        encode: (any Encodable & Sendable) throws -> Data
    ) throws(RequestSerializationError) -> TransferRequest {
        guard let parameters, !self.encodesParametersInURI(request.head.method) else {
            return try self.serialize(request, parameters: parameters)
        }
        var request = self.applyingDefaults(to: request)
        let body: Data
        do {
            body = try encode(parameters)
        } catch {
            throw RequestSerializationError(encoding: error)
        }
        if request.head.headerFields[.contentType] == nil {
            request.head.headerFields[.contentType] = contentType
        }
        request.body = .data(body)
        return request
    }
}
