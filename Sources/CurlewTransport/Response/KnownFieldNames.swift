import HTTPTypes

/// The header names servers send most, recognised from their bytes without making a `String`.
///
/// `HTTPField.Name(_:)` builds a string, validates it as a token and lowercases it for comparison:
/// for a typical response that is most of the cost of parsing its head. A name found here is one
/// of swift-http-types' static names instead (which keep their canonical spelling, e.g.
/// `Content-Length` for `content-length`: field names are case-insensitive).
enum KnownFieldNames {
    private static let names: [HTTPField.Name] = [
        .acceptRanges, .age, .cacheControl, .connection, .contentEncoding, .contentLength,
        .contentRange, .contentType, .date, .eTag, .expires, .lastModified, .location, .server,
        .setCookie, .transferEncoding, .vary, .strictTransportSecurity, .xContentTypeOptions,
        .wwwAuthenticate, .retryAfter, .contentLanguage, .contentDisposition, .accessControlAllowOrigin,
    ]

    /// The names grouped by length, each with its lowercase ASCII bytes.
    private static let byLength: [Int: [(bytes: [UInt8], name: HTTPField.Name)]] = {
        var table: [Int: [(bytes: [UInt8], name: HTTPField.Name)]] = [:]
        for name in Self.names {
            let bytes = Array(name.canonicalName.utf8)
            table[bytes.count, default: []].append((bytes, name))
        }
        return table
    }()

    /// The static name spelled by `bytes` in any letter case, or `nil`.
    static func name(for bytes: Slice<UnsafeRawBufferPointer>) -> HTTPField.Name? {
        guard let candidates = Self.byLength[bytes.count] else { return nil }
        for candidate in candidates where Self.equalIgnoringASCIICase(bytes, candidate.bytes) {
            return candidate.name
        }
        return nil
    }

    private static func equalIgnoringASCIICase(_ bytes: Slice<UnsafeRawBufferPointer>, _ lowercase: [UInt8]) -> Bool {
        var index = bytes.startIndex
        for expected in lowercase {
            var byte = bytes[index]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            guard byte == expected else { return false }
            index += 1
        }
        return true
    }
}
