import Foundation

/// A property list as a `Sendable` value: what ``PropertyListResponseSerializer`` returns.
///
/// ```swift
/// let plist = try await operation.responseValue(as: PropertyListValue.self)
/// let version = plist["CFBundleVersion"]?.stringValue
/// ```
public enum PropertyListValue: Sendable, Hashable {
    /// `<dict>`.
    case dictionary([String: PropertyListValue])
    /// `<array>`.
    case array([PropertyListValue])
    /// `<string>`.
    case string(String)
    /// `<integer>`.
    case integer(Int)
    /// `<real>`.
    case real(Double)
    /// `<true/>` or `<false/>`.
    case bool(Bool)
    /// `<date>`.
    case date(Date)
    /// `<data>`.
    case data(Data)

    /// The value for `key` of a dictionary; `nil` for a missing key or a value that is not one.
    public subscript(key: String) -> PropertyListValue? {
        guard case .dictionary(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` of an array; `nil` out of bounds or for a value that is not one.
    public subscript(index: Int) -> PropertyListValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is one.
    public var intValue: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number, if this is an integer or a real.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        default: return nil
        }
    }

    /// The Boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// Converts what `PropertyListSerialization` returns; `nil` for any other type. The nesting
    /// is bounded by `PropertyListSerialization`'s own limit, so the recursion is too.
    init?(foundation object: Any) {
        switch object {
        case let string as String:
            self = .string(string)
        case let date as Date:
            self = .date(date)
        case let data as Data:
            self = .data(data)
        case let number as NSNumber:
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "c"), UInt8(ascii: "B"):
                self = .bool(number.boolValue)
            case UInt8(ascii: "d"), UInt8(ascii: "f"):
                self = .real(number.doubleValue)
            default:
                guard let value = Int(exactly: number.int64Value) else { return nil }
                self = .integer(value)
            }
        case let flag as Bool:
            self = .bool(flag)
        case let array as [Any]:
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(array.count)
            for element in array {
                guard let value = PropertyListValue(foundation: element) else { return nil }
                elements.append(value)
            }
            self = .array(elements)
        case let dictionary as [String: Any]:
            var members: [String: PropertyListValue] = [:]
            members.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                guard let value = PropertyListValue(foundation: element) else { return nil }
                members[key] = value
            }
            self = .dictionary(members)
        default:
            return nil
        }
    }
}
