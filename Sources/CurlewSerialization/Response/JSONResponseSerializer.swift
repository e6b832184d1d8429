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
/// The body is parsed in one linear pass with an explicit stack, reading JSON as Foundation's
/// `JSONDecoder` does (see ``JSONValue`` for numbers) but without its cost for a ``JSONValue``:
/// decoding one through `JSONDecoder` takes time proportional to the values times their depth
/// (a 4 MB array of a million strings 100 levels deep took 129 s). Malformed JSON, and numbers
/// beyond `Double`'s range (`1e400`), fail with
/// ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)``, whose coding path
/// says where. Nesting deeper than ``maximumDepth`` fails with
/// ``ResponseSerializationError/Reason/nestingTooDeep(limit:)``, and more than
/// ``maximumNodeCount`` values with ``ResponseSerializationError/Reason/tooManyNodes(limit:)``
/// before they are built: the body itself is bounded by the transport's in-memory limit, and the
/// tree takes up to about 20 times the bytes of a dense body (`Docs/Serialization.md`).
public struct JSONResponseSerializer: ValidatingResponseSerializer, Hashable {
    public var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
    public var acceptableContentTypes: Set<String>? = ["application/json", "text/json", "text/javascript"]
    /// Drop object members whose value is `null`, at every depth. `false` by default.
    public var removesKeysWithNullValues = false
    /// The deepest nesting of arrays and objects accepted; 512 by default, `JSONDecoder`'s own
    /// limit. A ``JSONValue`` is freed and compared recursively, so raising this past a few
    /// thousand levels risks the thread's stack.
    public var maximumDepth = 512
    /// The most values accepted (arrays, objects, strings, numbers, Booleans and nulls; keys are
    /// part of their member); 1,000,000 by default.
    public var maximumNodeCount = 1_000_000
    /// Status codes whose empty body is ``JSONValue/null``: 204 and 205.
    public var emptyResponseCodes: Set<Int> = [204, 205]
    /// Request methods whose response's empty body is ``JSONValue/null``: HEAD.
    public var emptyRequestMethods: Set<HTTPRequest.Method> = [.head]

    /// Creates the serializer: 2xx, JSON content types, `null` members kept, the default limits.
    public init(removesKeysWithNullValues: Bool = false) {
        self.removesKeysWithNullValues = removesKeysWithNullValues
    }

    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> JSONValue {
        try self.serialize(response: response, body: body, url: url, requestMethod: nil)
    }

    /// The body as JSON, once the response is valid.
    ///
    /// - Throws: ``ResponseSerializationError``: an unacceptable status or content type, an
    ///   unexpected empty body, a limit crossed, or JSON that does not parse.
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
            do throws(JSONParser.Failure) {
                value = try JSONParser(maximumDepth: self.maximumDepth, maximumNodeCount: self.maximumNodeCount).parse(body)
            } catch {
                throw ResponseSerializationError(self.reason(for: error), response: response, body: body, url: url)
            }
            return self.removesKeysWithNullValues ? value.removingNullMembers() : value
        }
    }

    private func reason(for failure: JSONParser.Failure) -> ResponseSerializationError.Reason {
        switch failure {
        case .nestingTooDeep:
            return .nestingTooDeep(limit: self.maximumDepth)
        case .tooManyNodes:
            return .tooManyNodes(limit: self.maximumNodeCount)
        case .malformed(let description, let codingPath):
            return .decodingFailed(underlying: DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: description)),
                                   codingPath: codingPath)
        }
    }

    /// JSON's insignificant whitespace (RFC 8259 §2).
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
