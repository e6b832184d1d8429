import Foundation
import HTTPTypes

/// Validates the response and decodes the body as text in the charset its `Content-Type` names
/// (AFNetworking's `responseString`, Alamofire's `StringResponseSerializer`).
///
/// The charset comes from the `charset` parameter (`text/plain; charset=iso-8859-1`); when there
/// is none, or it is one Foundation does not know, ``fallbackEncoding`` (UTF-8 by default) is used.
/// Bytes that are not valid in that encoding are an error, not replacement characters. An empty
/// body is the empty string.
///
/// ```swift
/// operation.responseSerializer = StringResponseSerializer()
/// let page = try await operation.responseValue(as: String.self)
/// ```
public struct StringResponseSerializer: ValidatingResponseSerializer, Hashable {
    public var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
    /// `nil`: any content type.
    public var acceptableContentTypes: Set<String>?
    /// The encoding when the response names no charset, or one that is not known.
    public var fallbackEncoding: String.Encoding

    /// Creates the serializer: 2xx, any content type, UTF-8 when no charset is given.
    public init(fallbackEncoding: String.Encoding = .utf8) {
        self.fallbackEncoding = fallbackEncoding
    }

    /// The body as text.
    ///
    /// - Throws: ``ResponseSerializationError`` when the status or content type is unacceptable,
    ///   ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)`` when the bytes
    ///   are not valid in the charset.
    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> String {
        try self.validatedValue(response: response, body: body, url: url) { () throws(ResponseSerializationError) -> String in
            guard let body, !body.isEmpty else { return "" }
            let encoding = self.encoding(for: response)
            guard let text = String(data: body, encoding: encoding) else {
                throw ResponseSerializationError(
                    .decodingFailed(underlying: CharsetMismatch(encoding: encoding), codingPath: []),
                    response: response, body: body, url: url)
            }
            return text
        }
    }

    /// The encoding the response's charset names, or the fallback.
    func encoding(for response: HTTPResponse) -> String.Encoding {
        guard let charset = response.headerFields[.contentType].flatMap({ ContentType($0).charset }) else {
            return self.fallbackEncoding
        }
        return Self.encodings[charset] ?? self.fallbackEncoding
    }

    /// IANA charset names (lowercase) and common aliases that Foundation on Linux can decode.
    private static let encodings: [String: String.Encoding] = [
        "utf-8": .utf8, "utf8": .utf8,
        "us-ascii": .ascii, "ascii": .ascii,
        "iso-8859-1": .isoLatin1, "latin1": .isoLatin1, "iso_8859-1": .isoLatin1, "l1": .isoLatin1,
        "iso-8859-2": .isoLatin2, "latin2": .isoLatin2,
        "windows-1250": .windowsCP1250, "windows-1251": .windowsCP1251, "windows-1252": .windowsCP1252,
        "windows-1253": .windowsCP1253, "windows-1254": .windowsCP1254,
        "utf-16": .utf16, "utf-16be": .utf16BigEndian, "utf-16le": .utf16LittleEndian,
        "utf-32": .utf32, "utf-32be": .utf32BigEndian, "utf-32le": .utf32LittleEndian,
        "shift_jis": .shiftJIS, "euc-jp": .japaneseEUC, "iso-2022-jp": .iso2022JP, "macintosh": .macOSRoman,
    ]
}

/// The body's bytes are not valid text in the encoding the response named (or the fallback).
public struct CharsetMismatch: Error, Sendable, Hashable, CustomStringConvertible {
    /// The encoding the body was decoded with.
    public var encoding: String.Encoding

    /// Says which encoding the bytes did not fit.
    public var description: String {
        "The body is not valid \(self.encoding) text."
    }
}
