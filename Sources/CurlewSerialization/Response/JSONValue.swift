import Foundation

/// A JSON document as a `Sendable` value: what ``JSONResponseSerializer`` returns.
///
/// Objects, arrays, strings, numbers (an ``integer(_:)`` when the value is integral and fits
/// `Int` — `2`, `2.0` and `2e0` alike — a ``double(_:)`` otherwise), Booleans and null, as a value
/// safe to hand across threads (Foundation's `JSONSerialization` result, `Any`, is not).
/// Subscripts walk into it without casts:
///
/// ```swift
/// let json = try await operation.responseValue(as: JSONValue.self)
/// let name = json["items"]?[0]?["name"]?.stringValue
/// ```
///
/// It is `Codable` (decode it with `JSONDecoder`, encode it back) and can be written as a literal,
/// which makes expected values in tests short: `#expect(json == ["ok": true, "count": 2])`.
public enum JSONValue: Sendable, Hashable {
    /// An object; key order is not kept.
    case object([String: JSONValue])
    /// An array.
    case array([JSONValue])
    /// A string.
    case string(String)
    /// A number with an integral value that fits `Int`.
    case integer(Int)
    /// Any other number.
    case double(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    /// The member `key` of an object; `nil` for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` of an array; `nil` out of bounds or for a value that is not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number as an `Int`, if this is an integer (or a double with an integral value that fits).
    public var intValue: Int? {
        switch self {
        case .integer(let value): return value
        case .double(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The number as a `Double`, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The Boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        self == .null
    }

    /// This value with every object member whose value is `null` removed, in objects at any depth
    /// (also inside arrays); `null` elements of arrays stay. AFNetworking's
    /// `removesKeysWithNullValues`.
    public func removingNullMembers() -> JSONValue {
        switch self {
        case .object(let members):
            // Not a ternary with `nil`: JSONValue is ExpressibleByNilLiteral, so `nil` there would be `.null`.
            var kept: [String: JSONValue] = [:]
            for (key, member) in members where member != .null {
                kept[key] = member.removingNullMembers()
            }
            return .object(kept)
        case .array(let elements):
            return .array(elements.map { $0.removingNullMembers() })
        default:
            return self
        }
    }
}

// MARK: Literals

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// A string: `"curlew"`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer: `2`.
    public init(integerLiteral value: Int) { self = .integer(value) }
    /// A number with a fraction: `0.5`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A Boolean: `true`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// JSON `null`: `nil`.
    public init(nilLiteral: ()) { self = .null }
    /// An array: `[1, "two"]`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    /// An object; when a key appears twice, the last value wins.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

// MARK: Codable

extension JSONValue: Codable {
    /// Decodes any JSON value. A number decodes as ``integer(_:)`` when it is integral and fits `Int`.
    ///
    /// The decoder is asked for each type in turn, and `JSONDecoder` builds an error carrying the
    /// coding path for every wrong guess, so a document costs its values times their depth this
    /// way; ``JSONResponseSerializer`` parses a ``JSONValue`` directly, in linear time.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value; `JSONEncoder` refuses a non-finite ``double(_:)``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .object(let members): try container.encode(members)
        case .array(let elements): try container.encode(elements)
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}
