/// RFC 3986 percent-encoding for form and query components.
///
/// Kept as they are: the unreserved characters of RFC 3986 §2.3, `A`–`Z`, `a`–`z`, `0`–`9`, `-`, `.`,
/// `_` and `~`. Everything else is written as `%XX` of its UTF-8 bytes, uppercase hex: the space as
/// `%20` (never `+`), and every reserved character — `:/?#[]@` and `!$&'()*+,;=` — as well as `%`
/// itself and all non-ASCII text. No Unicode normalization happens: `é` written precomposed (NFC)
/// is `%C3%A9`, written decomposed (NFD) `e%CC%81`.
///
/// AFNetworking 2 escapes with `URLQueryAllowedCharacterSet` minus ``:#[]@!$&'()*+,;=``, which keeps
/// `?` and `/` unescaped as RFC 3986 §3.4 permits in a query; Curlew escapes those two as well, so
/// a component is never mistaken for a path by a server that splits naively. Both decode to the same
/// pairs.
enum FormPercentEncoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Whether `byte` is an RFC 3986 unreserved character.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// `string` with everything but unreserved characters percent-encoded.
    static func encode(_ string: String) -> String {
        let utf8 = string.utf8
        guard utf8.contains(where: { !Self.isUnreserved($0) }) else { return string }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count * 3)
        for byte in utf8 {
            if Self.isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
