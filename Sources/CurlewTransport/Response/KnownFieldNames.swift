import HTTPTypes

/// The header names servers send most, recognised from their bytes without making a `String`.
///
/// `HTTPField.Name(_:)` builds a string, validates it as a token and lowercases it for comparison:
/// for a typical response that is most of the cost of parsing its head. A name found here is one
/// of swift-http-types' static names instead (which keep their canonical spelling, e.g.
/// `Content-Length` for `content-length`: field names are case-insensitive). The names the engine
/// itself reads come back with their ``Role``, so it never looks them up again.
enum KnownFieldNames {
    /// A field the engine reads while the head is parsed.
    enum Role: Hashable {
        case contentLength
        case contentEncoding
        case location
        /// Only whether it is there: beside `Content-Length`, the framing is invalid.
        case transferEncoding
    }

    struct Known {
        let name: HTTPField.Name
        let role: Role?
    }

    private static let names: [(HTTPField.Name, Role?)] = [
        (.acceptRanges, nil), (.age, nil), (.cacheControl, nil), (.connection, nil), (.contentEncoding, .contentEncoding),
        (.contentLength, .contentLength), (.contentRange, nil), (.contentType, nil), (.date, nil), (.eTag, nil),
        (.expires, nil), (.lastModified, nil), (.location, .location), (.server, nil), (.setCookie, nil),
        (.transferEncoding, .transferEncoding), (.vary, nil), (.strictTransportSecurity, nil), (.xContentTypeOptions, nil),
        (.wwwAuthenticate, nil), (.retryAfter, nil), (.contentLanguage, nil), (.contentDisposition, nil),
        (.accessControlAllowOrigin, nil),
    ]

    /// The names indexed by length (no hashing on the hot path), each with its lowercase ASCII bytes.
    private static let byLength: [[(bytes: [UInt8], known: Known)]] = {
        let longest = Self.names.map { $0.0.canonicalName.utf8.count }.max() ?? 0
        var table = [[(bytes: [UInt8], known: Known)]](repeating: [], count: longest + 1)
        for (name, role) in Self.names {
            let bytes = Array(name.canonicalName.utf8)
            table[bytes.count].append((bytes, Known(name: name, role: role)))
        }
        return table
    }()

    /// The static name spelled by `bytes` in any letter case, or `nil`.
    static func name(for bytes: Slice<UnsafeRawBufferPointer>) -> Known? {
        guard bytes.count < Self.byLength.count else { return nil }
        for candidate in Self.byLength[bytes.count] where Self.equalIgnoringASCIICase(bytes, candidate.bytes) {
            return candidate.known
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
