@testable import CurlewSerialization
import Foundation
import HTTPTypes
import Testing

/// `PropertyListResponseSerializer` against hostile bodies: shared references that expand (the
/// binary-plist bomb), cycles, offset tables that lie, text property lists too large for the limit,
/// and every limit crossed and raised. The binary scanner's count is checked against what
/// Foundation actually builds.
@Suite("Property list serializer limits")
struct PropertyListLimitTests {
    typealias Writer = BinaryPropertyListWriter

    static func parse(_ body: Data, _ serializer: PropertyListResponseSerializer = PropertyListResponseSerializer()) throws -> PropertyListValue {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "application/x-plist"
        return try serializer.serialize(response: head, body: body, url: nil)
    }

    static func reason(of error: any Error) -> ResponseSerializationError.Reason? {
        (error as? ResponseSerializationError)?.reason
    }

    static func isCorrupt(_ error: any Error, saying phrase: String) -> Bool {
        guard case .decodingFailed(let underlying, _) = Self.reason(of: error) else { return false }
        return "\(underlying)".contains(phrase)
    }

    /// The values in `value` (dictionary keys included), walked without recursion.
    static func nodeCount(_ value: PropertyListValue) -> Int {
        var count = 0
        var pending = [value]
        while let next = pending.popLast() {
            count += 1
            switch next {
            case .array(let elements): pending += elements
            case .dictionary(let members):
                count += members.count
                pending += members.values
            default: break
            }
        }
        return count
    }

    static func expansion(_ body: Data, nodes: Int = .max, bytes: Int = .max) throws -> BinaryPropertyListScanner.Expansion {
        let scanner = BinaryPropertyListScanner(maximumNodeCount: nodes, maximumByteCount: bytes)
        return try body.withUnsafeBytes { bytes in try scanner.expansion(of: bytes) }
    }

    // MARK: Shared references

    @Test("the bomb: 13 arrays, each referencing the next 16 times (317 bytes, 16¹³ values), fail before Foundation expands them")
    func bomb() throws {
        let body = Writer.bomb(levels: 13, fanOut: 16).data
        #expect(body.count == 317)
        #expect {
            try Self.parse(body)
        } throws: { error in
            guard case .tooManyNodes(1_000_000) = Self.reason(of: error) else { return false }
            return true
        }
        // Even a limit as high as Int allows stops it: the count never overflows.
        var serializer = PropertyListResponseSerializer()
        serializer.maximumNodeCount = .max
        #expect(throws: ResponseSerializationError.self) {
            try Self.parse(Writer.bomb(levels: 40, fanOut: 16).data, serializer)
        }
    }

    @Test("a 5-level bomb (143 bytes, 1,118,481 values) crosses the default limit; raised, it parses")
    func smallBomb() throws {
        let body = Writer.bomb(levels: 5, fanOut: 16).data
        #expect {
            try Self.parse(body)
        } throws: { error in
            guard case .tooManyNodes(1_000_000) = Self.reason(of: error) else { return false }
            return true
        }
        var serializer = PropertyListResponseSerializer()
        serializer.maximumNodeCount = 1_118_481
        #expect(Self.nodeCount(try Self.parse(body, serializer)) == 1_118_481)
    }

    @Test("the scanner counts exactly the values and bytes Foundation builds", arguments: [
        "bomb", "shared keys", "utf16 and data", "empty containers",
    ])
    func countsMatchFoundation(_ shape: String) throws {
        let writer: Writer
        let bytes: Int
        switch shape {
        case "bomb":
            writer = Writer.bomb(levels: 4, fanOut: 16)
            bytes = 65_536
        case "shared keys":
            // Ten dictionaries sharing the keys "a" and "b" and the value 7: strings count per reference.
            writer = Writer([.array(Array(repeating: 1, count: 10)), .dictionary([(2, 4), (3, 4)]), .string("a"), .string("b"),
                             .integer(7)])
            bytes = 20
        case "utf16 and data":
            writer = Writer([.array([1, 2, 1, 2]), .utf16("é✓"), .data(Data([1, 2, 3]))])
            bytes = 2 * (4 + 3)
        default:
            writer = Writer([.array([1, 2, 1]), .array([]), .dictionary([])])
            bytes = 0
        }
        let expansion = try Self.expansion(writer.data)
        let value = try PropertyListSerialization.propertyList(from: writer.data, format: nil)
        #expect(expansion.nodes == Self.nodeCount(try #require(PropertyListValue(foundation: value))))
        #expect(expansion.bytes == bytes)
    }

    // MARK: Cycles and lying tables

    @Test("objects that contain themselves are refused", arguments: [0, 1, 2])
    func cycles(_ shape: Int) throws {
        let writer = switch shape {
        case 0: Writer([.array([0])])
        case 1: Writer([.array([1, 2]), .string("x"), .array([1, 0])])
        default: Writer([.dictionary([(1, 2)]), .string("k"), .array([0])])
        }
        #expect {
            try Self.parse(writer.data)
        } throws: { error in
            Self.isCorrupt(error, saying: "contains itself")
        }
    }

    @Test("offset tables and counts that lie are typed errors, never a crash or an overread", arguments: [
        "truncated", "offset past the objects", "offset into the header", "no objects", "top past the table",
        "count past the body", "reference past the table", "reference size 0", "reference too narrow", "not bplist00",
        "a set (Foundation crashed on it)",
    ])
    func lyingTables(_ lie: String) throws {
        var writer = Writer([.array([1, 2]), .string("a"), .string("b")])
        var body: Data
        switch lie {
        case "truncated":
            body = writer.data.dropLast()
        case "offset past the objects":
            writer.offsetOverrides = [1: 200]
            body = writer.data
        case "offset into the header":
            writer.offsetOverrides = [2: 3]
            body = writer.data
        case "no objects":
            writer.objectCountOverride = 0
            body = writer.data
        case "top past the table":
            writer.top = 3
            body = writer.data
        case "count past the body":
            // An array claiming 2³² references (an 8-byte count) in a body of a few dozen bytes.
            body = Writer([.raw([0xAF, 0x13, 0, 0, 0, 1, 0, 0, 0, 0, 0])]).data
        case "reference past the table":
            writer.objects[0] = .array([1, 7])
            body = writer.data
        case "reference size 0":
            body = writer.data
            body[body.count - 25] = 0
        case "reference too narrow":
            // 300 objects cannot be named with 1-byte references.
            writer = Writer([.array([1])] + Array(repeating: .string("a"), count: 299))
            writer.referenceSize = 1
            body = writer.data
        case "not bplist00":
            body = writer.data
            body[7] = UInt8(ascii: "9")
        default:
            // An array holding a set holding "x": PropertyListSerialization crashed the process bridging it.
            body = Writer([.array([1]), .raw([0xC1, 2]), .string("x")]).data
        }
        #expect {
            try Self.parse(body)
        } throws: { error in
            guard case .decodingFailed = Self.reason(of: error) else { return false }
            return true
        }
    }

    @Test("overlapping objects are read where the table points, as Foundation reads them")
    func overlappingObjects() throws {
        // Object 2 starts inside object 1's data, whose bytes spell an array of two references to object 3.
        var writer = Writer([.array([1, 2]), .data(Data([0x01, 0xA2, 0x03, 0x03])), .array([]), .string("leaf")])
        let plain = writer.data
        let dataOffset = try #require(plain.firstIndex(of: 0x44)) - plain.startIndex
        writer.offsetOverrides = [2: dataOffset + 2]
        let body = writer.data
        #expect(try Self.expansion(body) == .init(nodes: 5, bytes: 4 + 8))
        #expect(try Self.parse(body) == .array([.data(Data([0x01, 0xA2, 0x03, 0x03])), .array([.string("leaf"), .string("leaf")])]))
    }

    // MARK: Limits

    @Test("a million references to one string cross the node limit; raised, they parse")
    func nodeLimit() throws {
        let body = Writer([.array(Array(repeating: 1, count: 1_000_000)), .string("x")]).data
        #expect {
            try Self.parse(body)
        } throws: { error in
            guard case .tooManyNodes(1_000_000) = Self.reason(of: error) else { return false }
            return true
        }
        var serializer = PropertyListResponseSerializer()
        serializer.maximumNodeCount = 1_000_001
        #expect(try Self.parse(body, serializer)[999_999] == .string("x"))
    }

    @Test("one long string referenced many times crosses the byte limit; raised, it parses")
    func byteLimit() throws {
        let megabyte = String(repeating: "m", count: 1 << 20)
        let body = Writer([.array(Array(repeating: 1, count: 65)), .string(megabyte)]).data
        #expect {
            try Self.parse(body)
        } throws: { error in
            guard case .tooLarge(67_108_864) = Self.reason(of: error) else { return false }
            return true
        }
        let small = Writer([.array(Array(repeating: 1, count: 100)), .string(String(repeating: "k", count: 1024))]).data
        var serializer = PropertyListResponseSerializer()
        serializer.maximumExpandedByteCount = 100 * 1024 - 1
        #expect(throws: ResponseSerializationError.self) { try Self.parse(small, serializer) }
        serializer.maximumExpandedByteCount = 100 * 1024
        #expect(try Self.parse(small, serializer)[99]?.stringValue?.count == 1024)
    }

    @Test("text property lists are bounded from their bytes: XML exactly (with <plist>), OpenStep from above")
    func textLimits() throws {
        let xml = Data(("<?xml version=\"1.0\"?><plist version=\"1.0\"><array>"
            + String(repeating: "<string>a</string>", count: 11) + "</array></plist>").utf8)
        var serializer = PropertyListResponseSerializer()
        serializer.maximumNodeCount = 13
        #expect(try Self.parse(xml, serializer)[10] == .string("a"))
        serializer.maximumNodeCount = 12
        #expect {
            try Self.parse(xml, serializer)
        } throws: { error in
            guard case .tooManyNodes(12) = Self.reason(of: error) else { return false }
            return true
        }
        let openStep = Data(("(" + Array(repeating: "a", count: 1_000_001).joined(separator: ",") + ")").utf8)
        #expect {
            try Self.parse(openStep)
        } throws: { error in
            guard case .tooManyNodes(1_000_000) = Self.reason(of: error) else { return false }
            return true
        }
        #expect(try Self.parse(Data("{a = (b, c); d = <0102>;}".utf8)) == .dictionary(["a": .array([.string("b"), .string("c")]),
                                                                                      "d": .data(Data([1, 2]))]))
    }

    @Test("a property list declaring an encoding whose markup is not ASCII bytes is refused")
    func hiddenMarkup() throws {
        // In UTF-7, `+ADw-` is `<`: Foundation would read tags no byte shows.
        let tags = "<plist version=\"1.0\"><array><string>a</string></array></plist>".replacingOccurrences(of: "<", with: "+ADw-")
        #expect {
            try Self.parse(Data(("<?xml version=\"1.0\" encoding=\"UTF-7\"?>" + tags).utf8))
        } throws: { error in
            Self.isCorrupt(error, saying: "encoding UTF-7")
        }
        var utf16 = Data([0xFF, 0xFE])
        for unit in "<plist version=\"1.0\"><string>é</string></plist>".utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(try Self.parse(utf16) == .string("é"))
    }
}
