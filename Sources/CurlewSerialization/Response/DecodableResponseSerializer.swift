import Foundation
import HTTPTypes

/// Validates the response and decodes the body as `T` (Alamofire's `DecodableResponseSerializer`).
///
/// ```swift
/// struct User: Decodable, Sendable { var id: Int; var name: String }
///
/// operation.responseSerializer = DecodableResponseSerializer<User>()
/// let user = try await operation.responseValue(as: User.self)
/// ```
///
/// The ``decoder`` is a `JSONDecoder` by default; any ``DataDecoder`` works (a configured
/// `JSONDecoder` with a date strategy, a `PropertyListDecoder`…). A decoding failure says where:
/// ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)`` carries the
/// `DecodingError` and its coding path (`["items", "3", "name"]`).
///
/// **Empty bodies.** A 204 or 205, or any response to HEAD, has no body by definition; if `T`
/// conforms to ``EmptyResponse`` (``Empty``, or an `Optional` of anything), such a response
/// decodes as `T.emptyValue()`. Any other empty body, or an expected one when `T` cannot be empty,
/// fails with ``ResponseSerializationError/Reason/emptyBody``. Only
/// ``serialize(response:body:url:requestMethod:)`` knows the method (RequestOperation calls that
/// one); ``serialize(response:body:url:)`` allows empty bodies for the status codes only.
///
/// `acceptableContentTypes` is `nil` by default, since the decoder decides the format; set it to
/// refuse, say, an HTML error page before decoding is even tried.
///
/// **Limits.** Before a `JSONDecoder` or a `PropertyListDecoder` decodes, the body's values are
/// counted (a shared object of a binary property list once per reference, as the decoder would
/// build it) and more than ``maximumNodeCount`` fail with
/// ``ResponseSerializationError/Reason/tooManyNodes(limit:)``; a binary property list expanding to
/// more than ``maximumExpandedByteCount`` bytes of strings and data fails with
/// ``ResponseSerializationError/Reason/tooLarge(limit:)``, as in ``PropertyListResponseSerializer``.
/// Other decoders get the body as it is. Decoding a ``JSONValue`` inside `T` costs time
/// proportional to its values times their depth (see ``JSONResponseSerializer``).
public struct DecodableResponseSerializer<T: Decodable & Sendable>: ValidatingResponseSerializer {
    public var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
    /// `nil`: any content type.
    public var acceptableContentTypes: Set<String>?
    /// Decodes the body.
    public var decoder: any DataDecoder
    /// Status codes whose empty body decodes as `T.emptyValue()`: 204 and 205.
    public var emptyResponseCodes: Set<Int> = [204, 205]
    /// Request methods whose response's empty body decodes as `T.emptyValue()`: HEAD.
    public var emptyRequestMethods: Set<HTTPRequest.Method> = [.head]
    /// The most values a `JSONDecoder` or `PropertyListDecoder` may decode from a body;
    /// 1,000,000 by default.
    public var maximumNodeCount = 1_000_000
    /// The most bytes of strings and data a binary property list may expand to for a
    /// `PropertyListDecoder`, a shared string counted once per reference; 64 MiB by default.
    public var maximumExpandedByteCount = 64 << 20

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - type: The type to decode (it can usually be inferred).
    ///   - decoder: Decodes the body; a `JSONDecoder` by default.
    public init(_ type: T.Type = T.self, decoder: any DataDecoder = JSONDecoder()) {
        self.decoder = decoder
    }

    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> T {
        try self.serialize(response: response, body: body, url: url, requestMethod: nil)
    }

    /// The body decoded as `T`, once the response is valid.
    ///
    /// - Throws: ``ResponseSerializationError``: an unacceptable status or content type, an
    ///   empty body `T` cannot stand for, or a body that does not decode.
    public func serialize(
        response: HTTPResponse, body: Data?, url: URL?, requestMethod: HTTPRequest.Method?
    ) throws(ResponseSerializationError) -> T {
        try self.validatedValue(response: response, body: body, url: url) { () throws(ResponseSerializationError) -> T in
            guard let body, !body.isEmpty else {
                guard isEmptyBodyExpected(response, requestMethod: requestMethod, statusCodes: self.emptyResponseCodes,
                                          requestMethods: self.emptyRequestMethods),
                      let empty = T.self as? any EmptyResponse.Type,
                      let value = empty.emptyValue() as? T else {
                    throw ResponseSerializationError(.emptyBody, response: response, body: body, url: url)
                }
                return value
            }
            if let refusal = self.refusal(of: body) {
                throw ResponseSerializationError(refusal, response: response, body: body, url: url)
            }
            do {
                return try self.decoder.decode(T.self, from: body)
            } catch {
                throw ResponseSerializationError(.decodingFailed(underlying: error, codingPath: Self.codingPath(of: error)),
                                                 response: response, body: body, url: url)
            }
        }
    }

    /// Why the decoder must not see `body`: too many values for a JSON or property-list decoder.
    private func refusal(of body: Data) -> ResponseSerializationError.Reason? {
        if self.decoder is JSONDecoder {
            return JSONValueCounter.isWithin(self.maximumNodeCount, body) ? nil : .tooManyNodes(limit: self.maximumNodeCount)
        }
        if self.decoder is PropertyListDecoder {
            return PropertyListBudget(maximumNodeCount: self.maximumNodeCount, maximumExpandedByteCount: self.maximumExpandedByteCount)
                .refusal(of: body)
        }
        return nil
    }

    /// Where a `DecodingError` happened, as strings; empty for other errors.
    static func codingPath(of error: any Error) -> [String] {
        guard let error = error as? DecodingError else { return [] }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return context.codingPath.map(Self.pathComponent)
        case .keyNotFound(let key, let context):
            return (context.codingPath + [key]).map(Self.pathComponent)
        @unknown default:
            return []
        }
    }

    private static func pathComponent(_ key: any CodingKey) -> String {
        key.intValue.map(String.init) ?? key.stringValue
    }
}

/// A type that stands for an empty body: ``DecodableResponseSerializer`` returns ``emptyValue()``
/// for a 204, a 205 or a response to HEAD.
public protocol EmptyResponse {
    /// The value of an empty body.
    static func emptyValue() -> Self
}

/// The value of a response that has, or may have, no body: decode `Empty` when all you need is
/// the status.
///
/// ```swift
/// operation.responseSerializer = DecodableResponseSerializer<Empty>()   // DELETE answered 204
/// ```
public struct Empty: Codable, Sendable, Hashable, EmptyResponse {
    /// The empty value.
    public static let value = Empty()

    /// Creates the empty value.
    public init() {}

    public static func emptyValue() -> Empty {
        Self.value
    }
}

extension Optional: EmptyResponse {
    /// `nil`: an `Optional` of any type stands for an empty body.
    public static func emptyValue() -> Self {
        nil
    }
}
