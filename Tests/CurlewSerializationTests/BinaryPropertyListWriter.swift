import Foundation

/// Writes binary property lists (`bplist00`) object by object, for shapes Foundation's encoder
/// never makes: arrays referenced many times, cycles, offset tables that lie.
struct BinaryPropertyListWriter {
    enum Object {
        /// References to other objects, by index.
        case array([Int])
        /// Key and value references, by index.
        case dictionary([(key: Int, value: Int)])
        /// An ASCII string.
        case string(String)
        /// A UTF-16 string.
        case utf16(String)
        case integer(Int64)
        case data(Data)
        /// Bytes written as they are: an object header that lies.
        case raw([UInt8])
    }

    var objects: [Object]
    var top = 0
    /// Bytes per reference; 1 by default, 2 or 4 when there are more objects.
    var referenceSize: Int?
    /// Replaces the offset of some objects (the table then points where the test wants).
    var offsetOverrides: [Int: Int] = [:]
    /// Replaces the object count in the trailer.
    var objectCountOverride: Int?

    init(_ objects: [Object], top: Int = 0) {
        self.objects = objects
        self.top = top
    }

    /// The "billion laughs" of property lists: `levels` arrays, each referencing the next one
    /// `fanOut` times, the last one a string: Σ fanOutᵏ values from a few hundred bytes.
    static func bomb(levels: Int, fanOut: Int) -> BinaryPropertyListWriter {
        var objects = (0..<levels).map { Object.array(Array(repeating: $0 + 1, count: fanOut)) }
        objects.append(.string("x"))
        return BinaryPropertyListWriter(objects)
    }

    var data: Data {
        let referenceSize = self.referenceSize ?? (self.objects.count < 256 ? 1 : self.objects.count < 65_536 ? 2 : 4)
        var body = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in self.objects {
            offsets.append(body.count)
            switch object {
            case .array(let references):
                body += Self.marker(0xA0, count: references.count)
                for reference in references { body += Self.bigEndian(reference, size: referenceSize) }
            case .dictionary(let pairs):
                body += Self.marker(0xD0, count: pairs.count)
                for pair in pairs { body += Self.bigEndian(pair.key, size: referenceSize) }
                for pair in pairs { body += Self.bigEndian(pair.value, size: referenceSize) }
            case .string(let text):
                body += Self.marker(0x50, count: text.utf8.count) + Array(text.utf8)
            case .utf16(let text):
                body += Self.marker(0x60, count: text.utf16.count)
                for unit in text.utf16 { body += Self.bigEndian(Int(unit), size: 2) }
            case .integer(let value):
                body += [0x13] + Self.bigEndian(Int(truncatingIfNeeded: UInt64(bitPattern: value)), size: 8)
            case .data(let bytes):
                body += Self.marker(0x40, count: bytes.count) + Array(bytes)
            case .raw(let bytes):
                body += bytes
            }
        }
        for (index, offset) in self.offsetOverrides { offsets[index] = offset }
        let tableStart = body.count
        let offsetSize = tableStart < 256 ? 1 : tableStart < 65_536 ? 2 : 4
        for offset in offsets { body += Self.bigEndian(offset, size: offsetSize) }
        body += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        body += Self.bigEndian(self.objectCountOverride ?? self.objects.count, size: 8)
        body += Self.bigEndian(self.top, size: 8) + Self.bigEndian(tableStart, size: 8)
        return Data(body)
    }

    /// A marker with its count: in the low nibble, or after it as an integer object.
    static func marker(_ kind: UInt8, count: Int) -> [UInt8] {
        if count < 15 { return [kind | UInt8(count)] }
        if count < 256 { return [kind | 0x0F, 0x10, UInt8(count)] }
        if count < 65_536 { return [kind | 0x0F, 0x11] + Self.bigEndian(count, size: 2) }
        return [kind | 0x0F, 0x12] + Self.bigEndian(count, size: 4)
    }

    static func bigEndian(_ value: Int, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
