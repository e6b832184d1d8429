/// What `.entity` answers to a request's `Range` and `If-Range` headers.
enum RangeDecision: Hashable {
    /// Send the whole resource with 200.
    case full
    /// Send bytes `first...last` (inclusive) with 206.
    case partial(first: Int, last: Int)
    /// Send 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Decides for a resource of `size` bytes with the given validators (single ranges only).
    static func decide(range: String?, ifRange: String?, size: Int, etag: String?, lastModified: String?) -> RangeDecision {
        guard let range else { return .full }
        if let ifRange, !validatorMatches(ifRange, etag: etag, lastModified: lastModified) {
            return .full
        }
        return parse(range, size: size)
    }

    /// `If-Range` passes only on a strong, exact ETag match or an exact `Last-Modified` match.
    static func validatorMatches(_ ifRange: String, etag: String?, lastModified: String?) -> Bool {
        let validator = ifRange.trimmingWhitespace()
        if validator.hasPrefix("W/") { return false }
        if validator.hasPrefix("\"") {
            guard let etag, !etag.hasPrefix("W/") else { return false }
            return validator == etag
        }
        guard let lastModified else { return false }
        return validator == lastModified
    }

    /// Parses `bytes=a-b`, `bytes=a-` or `bytes=-n`. Anything else, several ranges included, is ignored
    /// (``full``), which RFC 9110 allows.
    static func parse(_ header: String, size: Int) -> RangeDecision {
        let value = header.trimmingWhitespace()
        guard let equals = value.firstIndex(of: "=") else { return .full }
        guard value[..<equals].trimmingWhitespace().lowercased() == "bytes" else { return .full }
        let spec = value[value.index(after: equals)...].trimmingWhitespace()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .full }
        let firstText = spec[..<dash].trimmingWhitespace()
        let lastText = spec[spec.index(after: dash)...].trimmingWhitespace()

        if firstText.isEmpty {
            // Suffix range: the last n bytes.
            guard let suffix = parseDigits(lastText) else { return .full }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .partial(first: max(0, size - suffix), last: size - 1)
        }
        guard let first = parseDigits(firstText) else { return .full }
        var last = size - 1
        if !lastText.isEmpty {
            guard let parsedLast = parseDigits(lastText), parsedLast >= first else { return .full }
            last = min(parsedLast, size - 1)
        }
        guard first < size else { return .unsatisfiable }
        return .partial(first: first, last: last)
    }

    /// A non-negative decimal made of digits only (no sign, no spaces), or `nil`.
    static func parseDigits(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int(text)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingWhitespace() -> Substring {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = self.firstIndex(where: { !isWhitespace($0) }),
            let end = self.lastIndex(where: { !isWhitespace($0) })
        else { return Substring() }
        return Substring(self[start...end])
    }
}
