import Foundation

/// Counts the values in JSON text without building them: what ``DecodableResponseSerializer``
/// checks before `JSONDecoder` builds its own tree and the `Decodable` value.
///
/// The count is exact for valid JSON (every array, object, string that is not a key, number,
/// Boolean and null); invalid text gets some count and then fails in `JSONDecoder`, which scans
/// it all before it decodes. The text is read as `JSONDecoder` reads it (UTF-16 and UTF-32
/// transcoded first), in one linear pass; the count stops at 513 levels of nesting, where
/// `JSONDecoder` stops too.
enum JSONValueCounter {
    /// Whether `data` holds at most `limit` values.
    static func isWithin(_ limit: Int, _ data: Data) -> Bool {
        JSONParser.withUTF8(data) { bytes in Self.count(bytes, upTo: limit) <= limit } ?? true
    }

    /// The values in `bytes`, or a number past `limit` as soon as the count passes it.
    private static func count(_ bytes: UnsafeRawBufferPointer, upTo limit: Int) -> Int {
        var count = 0
        var containers: [Bool] = []   // true: an object
        var expectingKey = false
        var index = 0
        while index < bytes.count, count <= limit {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index += 1
                if !expectingKey { count += 1 }
                expectingKey = false
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard containers.count <= 512 else { return count }
                count += 1
                containers.append(byte == UInt8(ascii: "{"))
                expectingKey = byte == UInt8(ascii: "{")
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = containers.popLast()
                expectingKey = false
            case UInt8(ascii: ","):
                expectingKey = containers.last == true
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                count += 1
                while index < bytes.count, Self.continuesToken(bytes[index]) { index += 1 }
            default:
                break
            }
        }
        return count
    }

    /// Bytes that continue a number or a literal.
    private static func continuesToken(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
