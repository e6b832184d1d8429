import Foundation

/// A value that can be a request parameter: what lets a dictionary of parameters mix variables of
/// different types, `["q": query, "page": page]`.
///
/// Strings, Booleans, integers and floating-point numbers, `UUID` (its string), `URL` (its absolute
/// string), ``ParameterValue``, and optionals (`nil` is ``ParameterValue/null``), arrays and
/// string-keyed dictionaries of them conform. A literal-only dictionary can also be ``Parameters``,
/// whose values may be `nil` and nested dictionaries of mixed types.
public protocol ParameterConvertible: Sendable {
    /// The value as a parameter.
    var parameterValue: ParameterValue { get }
}

extension ParameterValue: ParameterConvertible {
    /// The value itself.
    public var parameterValue: ParameterValue { self }

    /// A dictionary of parameters built from values of any convertible types.
    ///
    /// - Parameter parameters: Names and values.
    public init(_ parameters: [String: any ParameterConvertible]) {
        self = .dictionary(parameters.mapValues(\.parameterValue))
    }
}

extension String: ParameterConvertible {
    /// The string.
    public var parameterValue: ParameterValue { .string(self) }
}

extension Substring: ParameterConvertible {
    /// The substring's text.
    public var parameterValue: ParameterValue { .string(String(self)) }
}

extension Bool: ParameterConvertible {
    /// The Boolean.
    public var parameterValue: ParameterValue { .bool(self) }
}

extension Int: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue { .integer(self) }
}

extension Int8: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue { .integer(Int(self)) }
}

extension Int16: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue { .integer(Int(self)) }
}

extension Int32: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue { .integer(Int(self)) }
}

extension Int64: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue { .integer(Int(self)) }
}

extension UInt8: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue { .integer(Int(self)) }
}

extension UInt16: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue { .integer(Int(self)) }
}

extension UInt32: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue { .integer(Int(self)) }
}

extension UInt: ParameterConvertible {
    /// The integer; one beyond `Int.max` is written as its decimal text.
    public var parameterValue: ParameterValue { Int(exactly: self).map(ParameterValue.integer) ?? .string(String(self)) }
}

extension UInt64: ParameterConvertible {
    /// The integer; one beyond `Int.max` is written as its decimal text.
    public var parameterValue: ParameterValue { Int(exactly: self).map(ParameterValue.integer) ?? .string(String(self)) }
}

extension Double: ParameterConvertible {
    /// The number (it must be finite to be encoded).
    public var parameterValue: ParameterValue { .double(self) }
}

extension Float: ParameterConvertible {
    /// The number (it must be finite to be encoded).
    public var parameterValue: ParameterValue { .double(Double(self)) }
}

extension UUID: ParameterConvertible {
    /// The UUID's string, `E621E1F8-C36C-495A-93FC-0C247A3E6E5F`.
    public var parameterValue: ParameterValue { .string(self.uuidString) }
}

extension URL: ParameterConvertible {
    /// The URL's absolute string.
    public var parameterValue: ParameterValue { .string(self.absoluteString) }
}

extension Optional: ParameterConvertible where Wrapped: ParameterConvertible {
    /// The wrapped value, or ``ParameterValue/null``.
    public var parameterValue: ParameterValue {
        switch self {
        case .some(let value): return value.parameterValue
        case .none: return ParameterValue.null
        }
    }
}

extension Array: ParameterConvertible where Element: ParameterConvertible {
    /// The elements, in order.
    public var parameterValue: ParameterValue { .array(self.map(\.parameterValue)) }
}

extension Dictionary: ParameterConvertible where Key == String, Value: ParameterConvertible {
    /// The named values.
    public var parameterValue: ParameterValue { .dictionary(self.mapValues(\.parameterValue)) }
}
