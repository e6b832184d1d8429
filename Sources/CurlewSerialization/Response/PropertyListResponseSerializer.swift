import Foundation
import HTTPTypes

/// Validates the response and parses the body as a property list (XML, binary or OpenStep) into a
/// ``PropertyListValue``: AFNetworking's `AFPropertyListResponseSerializer`.
///
/// Accepts `application/x-plist` by default. An empty body fails with
/// ``ResponseSerializationError/Reason/emptyBody``; a body that does not parse, or nests deeper
/// than `PropertyListSerialization` allows (about 512 levels on Linux, measured in
/// `Docs/Serialization.md`), with ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)``.
public struct PropertyListResponseSerializer: ValidatingResponseSerializer, Hashable {
    public var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
    public var acceptableContentTypes: Set<String>? = ["application/x-plist"]

    /// Creates the serializer: 2xx, `application/x-plist`.
    public init() {}

    /// The body as a property list, once the response is valid.
    ///
    /// - Throws: ``ResponseSerializationError``: an unacceptable status or content type, an empty
    ///   body, or one that does not parse.
    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> PropertyListValue {
        try self.validatedValue(response: response, body: body, url: url) { () throws(ResponseSerializationError) -> PropertyListValue in
            guard let body, !body.isEmpty else {
                throw ResponseSerializationError(.emptyBody, response: response, body: body, url: url)
            }
            let object: Any
            do {
                object = try PropertyListSerialization.propertyList(from: body, format: nil)
            } catch {
                throw ResponseSerializationError(.decodingFailed(underlying: error, codingPath: []),
                                                 response: response, body: body, url: url)
            }
            guard let value = PropertyListValue(foundation: object) else {
                throw ResponseSerializationError(
                    .decodingFailed(underlying: CocoaError(.propertyListReadCorrupt,
                                                           userInfo: [NSDebugDescriptionErrorKey: "A value does not fit PropertyListValue."]),
                                    codingPath: []),
                    response: response, body: body, url: url)
            }
            return value
        }
    }
}
