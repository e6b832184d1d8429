/// A `Content-Type` value split into its media type and parameters (RFC 9110 §8.3), leniently:
/// what cannot be parsed is left out rather than refused.
struct ContentType: Hashable {
    /// The media type, lowercased, without parameters: `application/json`.
    let mediaType: String
    /// Parameter names lowercased, values unquoted: `["charset": "utf-8"]`.
    let parameters: [String: String]

    init(_ value: String) {
        var pieces = value.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        self.mediaType = (pieces.next().map(Self.trimmed) ?? "").lowercased()
        var parameters: [String: String] = [:]
        while let piece = pieces.next() {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let name = Self.trimmed(piece[..<equals]).lowercased()
            var parameterValue = Self.trimmed(piece[piece.index(after: equals)...])
            if parameterValue.count >= 2, parameterValue.hasPrefix("\""), parameterValue.hasSuffix("\"") {
                parameterValue = String(parameterValue.dropFirst().dropLast())
            }
            if !name.isEmpty, parameters[name] == nil { parameters[name] = parameterValue }
        }
        self.parameters = parameters
    }

    /// The `charset` parameter, lowercased.
    var charset: String? { self.parameters["charset"]?.lowercased() }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
