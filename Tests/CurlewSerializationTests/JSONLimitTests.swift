import CurlewSerialization
import Foundation
import HTTPTypes
import Testing

/// `JSONResponseSerializer`'s parser against `JSONDecoder` (the same documents accepted, the same
/// values), its work linear whatever the nesting, its limits crossed and raised; and the limits
/// `DecodableResponseSerializer` checks before a JSON or property-list decoder runs.
@Suite("JSON serializer limits")
struct JSONLimitTests {
    static func parse(_ body: Data, _ serializer: JSONResponseSerializer = JSONResponseSerializer()) throws -> JSONValue {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "application/json"
        return try serializer.serialize(response: head, body: body, url: nil)
    }

    static func parse(_ text: String, _ serializer: JSONResponseSerializer = JSONResponseSerializer()) throws -> JSONValue {
        try Self.parse(Data(text.utf8), serializer)
    }

    static func reason(of error: any Error) -> ResponseSerializationError.Reason? {
        (error as? ResponseSerializationError)?.reason
    }

    static func decode<T: Decodable & Sendable>(_ body: Data, as type: T.Type, _ serializer: DecodableResponseSerializer<T>) throws -> T {
        try serializer.serialize(response: HTTPResponse(status: .ok), body: body, url: nil)
    }

    // MARK: The same as JSONDecoder

    static let documents: [[UInt8]] = [
        "2", "2.0", "2e0", "1E2", "-0", "-0.0", "1.5", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "9007199254740993.0", "1e18", "1.5e16", "0.05e18", "1e19", "1e-400", "1e400", "1.0000000000000002e-06", "0.30000000000000004",
        "5e-324", "1.7976931348623157e308", "123456789012345678901234567890", "01", "1.", ".5", "+1", "-", "1e", "1.5.3", "1e5e",
        "[1,]", "{\"a\":1,}", "[,]", "[1,,]", "{,}", "{\"a\":1,\"a\":2}", "{\"\u{e9}\":1,\"e\u{301}\":2}", "{\"\":null}",
        "\"\\ud83d\\ude00\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\\u00E9\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"\\x\"", "\"\\u12\"", "\"\\u0000\"",
        "NaN", "nan", "Infinity", "true", "tru", "false", "null", "nul", "1 2", "[1] \n", "[1]x", "[1/*c*/]", "['a']", "{a:1}",
        " \t\r\n1", "[[],{}]", "{\"a\":[1,{\"b\":[true,false,null]}],\"c\":\"d\"}", "[", "{", "\"unterminated", "{\"a\" 1}",
    ].map { Array($0.utf8) } + [
        [0xEF, 0xBB, 0xBF] + Array("[1]".utf8), [0xFF, 0xFE, 0x5B, 0, 0x31, 0, 0x5D, 0], [0, 0x5B, 0, 0x31, 0, 0x5D],
        [0x5B, 0, 0x31, 0, 0x5D, 0], [0x22, 0xFF, 0x22], [0x5B, 0xFF, 0x5D], [0x22, 0x01, 0x22], [0x22, 0x09, 0x22], [0x5B, 0x31, 0x5D, 0x00],
        [0x0B, 0x31], [0x0C, 0x31], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22],
    ]

    @Test("the parser accepts what JSONDecoder accepts, with the same value, and refuses what it refuses", arguments: Self.documents)
    func sameAsJSONDecoder(_ bytes: [UInt8]) {
        let body = Data(bytes)
        let expected = try? JSONDecoder().decode(JSONValue.self, from: body)
        let parsed = try? Self.parse(body)
        #expect(parsed == expected, "\(String(decoding: bytes, as: UTF8.self))")
    }

    @Test("a literal above 2⁵³ with a fraction stays a double (JSONDecoder truncated it to an integer)")
    func largeFractions() throws {
        #expect(try Self.parse("123456789012345678.9") == .double(123456789012345678.9))
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data("123456789012345678.9".utf8)) == .integer(123456789012345678))
        #expect(try Self.parse("1.5e16") == .integer(15_000_000_000_000_000))
    }

    @Test("a malformed document's error says where")
    func codingPath() {
        #expect {
            try Self.parse("{\"items\":[1,2,{\"name\":tru}]}")
        } throws: { error in
            guard case .decodingFailed(_, let path) = Self.reason(of: error) else { return false }
            return path == ["items", "2", "name"]
        }
    }

    // MARK: Linear work

    @Test("a million strings 100 levels deep (4 MB) parse in one pass, not once per level")
    func deepValues() throws {
        let count = 1_000_000
        let text = String(repeating: "[", count: 100) + Array(repeating: "\"a\"", count: count).joined(separator: ",")
            + String(repeating: "]", count: 100)
        var serializer = JSONResponseSerializer()
        serializer.maximumNodeCount = count + 100
        var value = try Self.parse(text, serializer)
        for _ in 1..<100 { value = try #require(value[0]) }
        #expect(value.arrayValue?.count == count)
    }

    // MARK: Limits

    @Test("every value counts as a node: the exact count passes, one fewer fails")
    func nodeCount() throws {
        // An array, 1, an array, 2, 3, an object, null: 7 values.
        let text = "[1,[2,3],{\"a\":null}]"
        var serializer = JSONResponseSerializer()
        serializer.maximumNodeCount = 7
        #expect(try Self.parse(text, serializer) == [1, [2, 3], ["a": nil]])
        serializer.maximumNodeCount = 6
        #expect {
            try Self.parse(text, serializer)
        } throws: { error in
            guard case .tooManyNodes(6) = Self.reason(of: error) else { return false }
            return true
        }
    }

    @Test("a million and one values cross the default limit; raising it parses them")
    func manyValues() throws {
        let text = "[" + Array(repeating: "0", count: 1_000_000).joined(separator: ",") + "]"
        #expect {
            try Self.parse(text)
        } throws: { error in
            guard case .tooManyNodes(1_000_000) = Self.reason(of: error) else { return false }
            return true
        }
        var serializer = JSONResponseSerializer()
        serializer.maximumNodeCount = 1_000_001
        #expect(try Self.parse(text, serializer).arrayValue?.count == 1_000_000)
    }

    @Test("512 levels parse, 513 fail with nestingTooDeep; a raised limit parses deeper")
    func depth() throws {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        #expect(throws: Never.self) { try Self.parse(nested(512)) }
        #expect {
            try Self.parse(nested(513))
        } throws: { error in
            guard case .nestingTooDeep(512) = Self.reason(of: error) else { return false }
            return true
        }
        var serializer = JSONResponseSerializer()
        serializer.maximumDepth = 1000
        #expect(throws: Never.self) { try Self.parse(nested(1000), serializer) }
    }

    // MARK: Decodable

    @Test("Decodable with a JSONDecoder: values are counted before it decodes")
    func decodableJSON() throws {
        let body = Data(("[" + Array(repeating: "0", count: 1_000_001).joined(separator: ",") + "]").utf8)
        #expect {
            try Self.decode(body, as: [Int].self, DecodableResponseSerializer<[Int]>())
        } throws: { error in
            guard case .tooManyNodes(1_000_000) = Self.reason(of: error) else { return false }
            return true
        }
        var serializer = DecodableResponseSerializer<[Int]>()
        serializer.maximumNodeCount = 1_000_002
        #expect(try Self.decode(body, as: [Int].self, serializer).count == 1_000_001)
        // Keys are not values; strings with escaped quotes and brackets are one value each.
        serializer.maximumNodeCount = 4
        let members = Data("{\"a\\\"]\":[\"x\\\\\",\"[{\"], \"b\":[]}".utf8)
        #expect(try Self.decode(members, as: [String: [String]].self, DecodableResponseSerializer<[String: [String]]>()) == [
            "a\"]": ["x\\", "[{"], "b": [],
        ])
        var strict = DecodableResponseSerializer<[String: [String]]>()
        strict.maximumNodeCount = 4
        #expect(throws: ResponseSerializationError.self) { try Self.decode(members, as: [String: [String]].self, strict) }
        strict.maximumNodeCount = 5
        #expect(try Self.decode(members, as: [String: [String]].self, strict).count == 2)
    }

    @Test("Decodable with a PropertyListDecoder: the binary-plist bomb is refused before it expands")
    func decodablePropertyList() throws {
        let body = BinaryPropertyListWriter.bomb(levels: 5, fanOut: 16).data
        typealias Nested = [[[[[String]]]]]
        #expect {
            try Self.decode(body, as: Nested.self, DecodableResponseSerializer<Nested>(decoder: PropertyListDecoder()))
        } throws: { error in
            guard case .tooManyNodes(1_000_000) = Self.reason(of: error) else { return false }
            return true
        }
        var serializer = DecodableResponseSerializer<Nested>(decoder: PropertyListDecoder())
        serializer.maximumNodeCount = 1_118_481
        #expect(try Self.decode(body, as: Nested.self, serializer)[15][15][15][15][15] == "x")
    }
}
