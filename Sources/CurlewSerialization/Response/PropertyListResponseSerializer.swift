import Foundation
import HTTPTypes

/// Validates the response and parses the body as a property list (XML, binary or OpenStep) into a
/// ``PropertyListValue``: AFNetworking's `AFPropertyListResponseSerializer`.
///
/// Accepts `application/x-plist` by default. An empty body fails with
/// ``ResponseSerializationError/Reason/emptyBody``; a body that does not parse, or nests deeper
/// than `PropertyListSerialization` allows (512 levels on Linux), with
/// ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)``.
///
/// The body is measured before `PropertyListSerialization` sees it, since Foundation builds one
/// copy of an object per reference to it: a binary property list of a few hundred bytes whose
/// arrays reference each other can describe 16¹³ values. A binary property list that expands to
/// more than ``maximumNodeCount`` values fails with
/// ``ResponseSerializationError/Reason/tooManyNodes(limit:)``, to more than
/// ``maximumExpandedByteCount`` bytes of strings and data with
/// ``ResponseSerializationError/Reason/tooLarge(limit:)``, and one whose objects contain
/// themselves, or that holds a set (no property-list type, and Foundation on Linux crashes
/// bridging one), with ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)``.
/// An XML or OpenStep property list cannot share objects; its values are bounded from its bytes
/// (an upper bound, exact for XML but for the `<plist>` element) against ``maximumNodeCount``, and
/// one declaring an encoding other than UTF-8, ASCII or an ISO 8859 or Windows code page is
/// refused. The limits and measurements are in `Docs/Serialization.md`.
public struct PropertyListResponseSerializer: ValidatingResponseSerializer, Hashable {
    public var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
    public var acceptableContentTypes: Set<String>? = ["application/x-plist"]
    /// The most values accepted, an object counted once per reference to it (dictionary keys
    /// included); 1,000,000 by default.
    public var maximumNodeCount = 1_000_000
    /// The most bytes of strings and data a binary property list may expand to, a shared string
    /// counted once per reference (as stored: one byte per ASCII character, two per UTF-16
    /// unit); 64 MiB by default, the transport's limit on a body in memory.
    public var maximumExpandedByteCount = 64 << 20

    /// Creates the serializer: 2xx, `application/x-plist`, the default limits.
    public init() {}

    /// The body as a property list, once the response is valid.
    ///
    /// - Throws: ``ResponseSerializationError``: an unacceptable status or content type, an empty
    ///   body, a limit crossed, or a body that does not parse.
    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> PropertyListValue {
        try self.validatedValue(response: response, body: body, url: url) { () throws(ResponseSerializationError) -> PropertyListValue in
            guard let body, !body.isEmpty else {
                throw ResponseSerializationError(.emptyBody, response: response, body: body, url: url)
            }
            let budget = PropertyListBudget(maximumNodeCount: self.maximumNodeCount, maximumExpandedByteCount: self.maximumExpandedByteCount)
            if let refusal = budget.refusal(of: body) {
                throw ResponseSerializationError(refusal, response: response, body: body, url: url)
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
