import Foundation
import HTTPTypes

/// Validates the response and parses the body as JSON into a ``JSONValue``: AFNetworking's
/// `AFJSONResponseSerializer`, the manager's default.
///
/// Accepts `application/json`, `text/json` and `text/javascript` by default, and any JSON text,
/// top-level fragments (`"text"`, `42`) included. With ``removesKeysWithNullValues``, object
/// members whose value is `null` are dropped at every depth.
///
/// An empty body (no bytes, or only whitespace) is ``JSONValue/null`` for a 204 or 205 and for a
/// response to HEAD, and ``ResponseSerializationError/Reason/emptyBody`` otherwise. (AFNetworking
/// returns `nil` without an error for any empty body; Curlew, like Alamofire, treats an empty 200
/// where JSON was promised as the server's mistake.)
///
/// A status outside ``acceptableStatusCodes`` fails, but an error document still parses into
/// ``ResponseSerializationError/parsedBody``:
///
/// ```swift
/// do {
///     let json = try JSONResponseSerializer().serialize(response: head, body: body, url: url)
/// } catch let error as ResponseSerializationError {
///     let message = (error.parsedBody as? JSONValue)?["error"]?.stringValue
/// }
/// ```
///
/// The body is parsed by Foundation's `JSONDecoder` (not `JSONSerialization`, which on Linux
/// rounds some numbers wrongly: `1.0000000000000002e-06` came back as `1.0000000000000004e-06`).
/// Nesting deeper than 512 arrays or objects fails with
/// ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)``: that is the
/// parser's own limit on Linux (measured in `Docs/Serialization.md`), so no input can exhaust the
/// stack. Numbers beyond `Double`'s range (`1e400`) fail the same way.
public struct JSONResponseSerializer: ValidatingResponseSerializer, Hashable {
    public var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
    public var acceptableContentTypes: Set<String>? = ["application/json", "text/json", "text/javascript"]
    /// Drop object members whose value is `null`, at every depth. `false` by default.
    public var removesKeysWithNullValues = false
    /// Status codes whose empty body is ``JSONValue/null``: 204 and 205.
    public var emptyResponseCodes: Set<Int> = [204, 205]
    /// Request methods whose response's empty body is ``JSONValue/null``: HEAD.
    public var emptyRequestMethods: Set<HTTPRequest.Method> = [.head]

    /// Creates the serializer: 2xx, JSON content types, `null` members kept.
    public init(removesKeysWithNullValues: Bool = false) {
        self.removesKeysWithNullValues = removesKeysWithNullValues
    }

    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> JSONValue {
        try self.serialize(response: response, body: body, url: url, requestMethod: nil)
    }

    /// The body as JSON, once the response is valid.
    ///
    /// - Throws: ``ResponseSerializationError``: an unacceptable status or content type, an
    ///   unexpected empty body, or JSON that does not parse.
    public func serialize(
        response: HTTPResponse, body: Data?, url: URL?, requestMethod: HTTPRequest.Method?
    ) throws(ResponseSerializationError) -> JSONValue {
        try self.validatedValue(response: response, body: body, url: url) { () throws(ResponseSerializationError) -> JSONValue in
            guard let body, body.contains(where: { !Self.isWhitespace($0) }) else {
                guard isEmptyBodyExpected(response, requestMethod: requestMethod, statusCodes: self.emptyResponseCodes,
                                          requestMethods: self.emptyRequestMethods) else {
                    throw ResponseSerializationError(.emptyBody, response: response, body: body, url: url)
                }
                return .null
            }
            let value: JSONValue
            do {
                value = try JSONDecoder().decode(JSONValue.self, from: body)
            } catch {
                throw ResponseSerializationError(.decodingFailed(underlying: error, codingPath: []),
                                                 response: response, body: body, url: url)
            }
            return self.removesKeysWithNullValues ? value.removingNullMembers() : value
        }
    }

    /// JSON's insignificant whitespace (RFC 8259 §2).
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
