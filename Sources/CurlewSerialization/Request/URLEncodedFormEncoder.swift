import Foundation

/// Encodes parameters as `application/x-www-form-urlencoded` text, the format of query strings
/// and form bodies, the way AFNetworking's `AFQueryStringFromParameters` does.
///
/// ```swift
/// let encoder = URLEncodedFormEncoder()
/// try encoder.encode(["q": "swift & c", "page": 2, "tags": ["a", "b"], "filter": ["min": 1], "all": nil])
/// // "all&filter%5Bmin%5D=1&page=2&q=swift%20%26%20c&tags%5B%5D=a&tags%5B%5D=b"
/// ```
///
/// The rules:
/// - The top level must be keyed (a dictionary, or a struct with `Encodable` properties).
/// - Keys are sorted (Swift's `String` order) at every level, so the same parameters always give
///   the same text. Arrays keep their order.
/// - A nested dictionary gives `key[sub]=value`; an array gives `key[]=1&key[]=2` (see
///   ``ArrayEncoding`` for the other styles). An empty dictionary or array gives nothing.
/// - ``ParameterValue/null`` (and `encodeNil`) gives the key alone, with no `=`, as AFNetworking
///   does for `NSNull`. A `nil` optional property of an `Encodable` is left out altogether (its
///   synthesized conformance skips it).
/// - Numbers are written without any locale: integers as digits; a finite `Double` with an integral
///   value below 2^53 as an integer (`2.0` → `2`, as `NSNumber` writes it), any other as Swift's
///   shortest round-trip form (`0.1`, `1e-05`, `1.5e+300`). A non-finite number is an error.
/// - Booleans follow ``boolEncoding``: `1`/`0` by default, as AFNetworking (`NSNumber`) and
///   Alamofire write them.
/// - Names and values are percent-encoded as RFC 3986 requires: only `A–Z a–z 0–9 - . _ ~` stay as
///   they are; the space is `%20`, and `+`, `&`, `=`, `[`, `]`, `/`, `?` and all other bytes are
///   `%XX` (uppercase). Brackets added for nesting are escaped too (`a%5Bb%5D=c`), as in
///   AFNetworking and Alamofire; servers decode them before parsing the nesting.
public struct URLEncodedFormEncoder: Sendable, Hashable {
    /// How array elements are named.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `tags[]=a&tags[]=b` (the default; Rails, PHP, AFNetworking).
        case brackets
        /// `tags=a&tags=b` (Go's `url.Values`, Java servlets).
        case noBrackets
        /// `tags[0]=a&tags[1]=b`.
        case indexed
    }

    /// How Booleans are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `1` and `0` (the default, as AFNetworking and Alamofire).
        case numeric
        /// `true` and `false`.
        case literal
    }

    /// How array elements are named; ``ArrayEncoding/brackets`` by default.
    public var arrayEncoding: ArrayEncoding
    /// How Booleans are written; ``BoolEncoding/numeric`` by default.
    public var boolEncoding: BoolEncoding

    /// Creates an encoder.
    public init(arrayEncoding: ArrayEncoding = .brackets, boolEncoding: BoolEncoding = .numeric) {
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// The form text for `parameters`: percent-encoded `name=value` pairs joined by `&`.
    ///
    /// - Throws: ``RequestSerializationError`` with ``RequestSerializationError/Code/invalidParameters``
    ///   when the top level is not keyed, a number is not finite, nesting is too deep, or encoding
    ///   the value threw.
    public func encode(_ parameters: some Encodable) throws(RequestSerializationError) -> String {
        Self.text(of: try self.pairs(parameters))
    }

    /// The form text for literal parameters: `["q": "swift", "page": 2]`.
    ///
    /// - Throws: As ``encode(_:)-(Encodable)``.
    public func encode(_ parameters: Parameters) throws(RequestSerializationError) -> String {
        Self.text(of: try self.pairs(parameters))
    }

    private static func text(of pairs: [(name: String, value: String?)]) -> String {
        pairs.map { pair in
            let name = FormPercentEncoding.encode(pair.name)
            guard let value = pair.value else { return name }
            return name + "=" + FormPercentEncoding.encode(value)
        }.joined(separator: "&")
    }

    /// The pairs the form text is made of, in order and not yet percent-encoded; `value` is `nil` for
    /// a name that stands alone. Multipart forms use these as their fields.
    ///
    /// - Throws: As ``encode(_:)-(Encodable)``.
    public func pairs(_ parameters: some Encodable) throws(RequestSerializationError) -> [(name: String, value: String?)] {
        let tree = try ParameterValue(encoding: parameters)
        var pairs: [(name: String, value: String?)] = []
        switch tree {
        case .dictionary(let values):
            for key in values.keys.sorted() {
                if let value = values[key] {
                    try self.flatten(value, name: key, path: [key], into: &pairs)
                }
            }
        case .null:
            break
        default:
            throw RequestSerializationError(.invalidParameters,
                                            "Form and query parameters must be keyed (a dictionary or a struct), not \(tree).")
        }
        return pairs
    }

    /// Appends the pairs of `value` named `name`. Recursion depth is bounded by
    /// ``ParameterValue/maximumDepth``, which ``ParameterValue/init(encoding:)`` enforces.
    private func flatten(
        _ value: ParameterValue, name: String, path: [String], into pairs: inout [(name: String, value: String?)]
    ) throws(RequestSerializationError) {
        switch value {
        case .dictionary(let values):
            for key in values.keys.sorted() {
                if let element = values[key] {
                    try self.flatten(element, name: "\(name)[\(key)]", path: path + [key], into: &pairs)
                }
            }
        case .array(let values):
            for (index, element) in values.enumerated() {
                let elementName: String
                switch self.arrayEncoding {
                case .brackets: elementName = name + "[]"
                case .noBrackets: elementName = name
                case .indexed: elementName = "\(name)[\(index)]"
                }
                try self.flatten(element, name: elementName, path: path + [String(index)], into: &pairs)
            }
        case .null:
            pairs.append((name, nil))
        case .string(let text):
            pairs.append((name, text))
        case .integer(let number):
            pairs.append((name, String(number)))
        case .bool(let flag):
            switch self.boolEncoding {
            case .numeric: pairs.append((name, flag ? "1" : "0"))
            case .literal: pairs.append((name, flag ? "true" : "false"))
            }
        case .double(let number):
            guard let text = Self.text(of: number) else {
                throw RequestSerializationError(.invalidParameters, "\(number) cannot be encoded: numbers must be finite.",
                                                codingPath: path)
            }
            pairs.append((name, text))
        }
    }

    /// A finite `Double` as text, without locale; `nil` when it is not finite.
    static func text(of number: Double) -> String? {
        guard number.isFinite else { return nil }
        if number == number.rounded(), abs(number) < 9_007_199_254_740_992 {
            return String(Int64(number))
        }
        return "\(number)"
    }
}
