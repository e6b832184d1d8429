import Foundation

/// Request parameters written inline, the Swift counterpart of AFNetworking's `NSDictionary`
/// parameters.
///
/// ```swift
/// let parameters: Parameters = ["q": "swift", "page": 2, "tags": ["a", "b"], "filter": ["min": 1]]
/// let request = try HTTPRequestSerializer().request(method: .get, url: url, parameters: parameters)
/// // GET …?filter%5Bmin%5D=1&page=2&q=swift&tags%5B%5D=a&tags%5B%5D=b
/// ```
///
/// Any `Encodable & Sendable` value works as parameters too; this type is for the literal.
public typealias Parameters = [String: ParameterValue]

/// One value of ``Parameters``: a string, a number, a Boolean, null, an array or a dictionary.
///
/// Every case can be written as a literal, so nested parameters need no type names:
/// `["filter": ["min": 1, "tags": ["a", "b"]], "draft": false, "note": nil]`.
///
/// It is `Encodable`, so it works with every request serializer (and with `JSONEncoder` or
/// `PropertyListEncoder` directly). Encoding fails for values a format cannot carry: a non-finite
/// ``double(_:)`` (JSON, form), ``null`` (property list), and nesting deeper than
/// ``maximumDepth`` (so a value built from untrusted input cannot overflow the stack).
public enum ParameterValue: Sendable, Hashable {
    /// Text.
    case string(String)
    /// A whole number.
    case integer(Int)
    /// A floating-point number; must be finite to be encoded.
    case double(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// No value: a form or query names the key alone (`flag`), JSON writes `null`.
    case null
    /// An ordered list.
    case array([ParameterValue])
    /// Named values; encoders write them with keys sorted, so output is stable.
    case dictionary([String: ParameterValue])

    /// The deepest nesting of arrays and dictionaries any encoder accepts (the top level is depth 1).
    public static let maximumDepth = 512
}

// MARK: Literals

extension ParameterValue: ExpressibleByStringLiteral {
    /// A string: `"swift"`.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension ParameterValue: ExpressibleByIntegerLiteral {
    /// An integer: `2`.
    public init(integerLiteral value: Int) {
        self = .integer(value)
    }
}

extension ParameterValue: ExpressibleByFloatLiteral {
    /// A number with a fraction: `0.5`.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }
}

extension ParameterValue: ExpressibleByBooleanLiteral {
    /// A Boolean: `true`.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension ParameterValue: ExpressibleByNilLiteral {
    /// No value: `nil`, the same as ``null``.
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension ParameterValue: ExpressibleByArrayLiteral {
    /// An array: `["a", "b"]`.
    public init(arrayLiteral elements: ParameterValue...) {
        self = .array(elements)
    }
}

extension ParameterValue: ExpressibleByDictionaryLiteral {
    /// A dictionary; when a key appears twice, the last value wins.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

// MARK: Encoding

extension ParameterValue: Encodable {
    /// Encodes the value; dictionaries are written key by key, arrays element by element.
    ///
    /// - Throws: `EncodingError.invalidValue` when nesting exceeds ``maximumDepth``, and whatever
    ///   the encoder throws (`JSONEncoder` refuses non-finite numbers).
    public func encode(to encoder: any Encoder) throws {
        guard encoder.codingPath.count < Self.maximumDepth else {
            throw EncodingError.invalidValue(self, EncodingError.Context(
                codingPath: encoder.codingPath,
                debugDescription: "Parameters nest deeper than \(Self.maximumDepth) levels."))
        }
        switch self {
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .integer(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .double(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .null:
            if encoder.userInfo[.curlewRefusesNull] as? Bool == true {
                throw EncodingError.invalidValue(self, EncodingError.Context(
                    codingPath: encoder.codingPath, debugDescription: "A property list cannot hold null."))
            }
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values {
                try container.encode(value)
            }
        case .dictionary(let values):
            var container = encoder.container(keyedBy: ParameterKey.self)
            for key in values.keys.sorted() {
                if let value = values[key] {
                    try container.encode(value, forKey: ParameterKey(key))
                }
            }
        }
    }
}

extension CodingUserInfoKey {
    /// Set to `true` by encoders whose format has no null (property lists): ``ParameterValue/null``
    /// then fails instead of being written as a placeholder string.
    static let curlewRefusesNull = CodingUserInfoKey(rawValue: "curlew.refusesNull")!
}

/// A dictionary key of a ``ParameterValue``, or an index on a coding path.
struct ParameterKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) {
        self.stringValue = string
        self.intValue = nil
    }

    init(stringValue: String) {
        self.init(stringValue)
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}
