import HTTPTypes

/// The `Cache-Control` directives (RFC 9111 §5.2) a private cache acts on, read from every
/// `Cache-Control` field of a request or a response. No I/O.
///
/// Names are case-insensitive; values may be tokens or quoted strings (a quoted comma does not end a
/// directive). A directive given twice keeps its first value. A `max-age` or `min-fresh` that is not
/// a number counts as 0 (so a response with an unreadable `max-age` is stale, as RFC 9111 §4.2.1
/// advises); a number past 2³¹ is 2³¹ (RFC 9111 §1.2.2). Linear in the field values, which the
/// response head limit bounds.
struct CacheControl: Hashable {
    /// `max-age`, in seconds.
    var maxAge: Int?
    /// `s-maxage` is present (a shared cache's lifetime: ignored for freshness, but it lets a
    /// response to an authorized request be stored, RFC 9111 §3.5).
    var hasSharedMaxAge = false
    /// `min-fresh` (requests), in seconds.
    var minFresh: Int?
    /// `no-cache`, with or without field names (a qualified one is treated as unqualified).
    var noCache = false
    /// `no-store`.
    var noStore = false
    /// `must-revalidate`.
    var mustRevalidate = false
    /// `public`.
    var isPublic = false
    /// `private`.
    var isPrivate = false
    /// `only-if-cached` (requests).
    var onlyIfCached = false

    /// The largest delta-seconds value kept (RFC 9111 §1.2.2).
    static let maximumDeltaSeconds = 1 << 31

    /// The directives of every `Cache-Control` field in `fields`.
    init(_ fields: HTTPFields) {
        for value in fields[values: .cacheControl] {
            self.read(value)
        }
    }

    /// The directives of one field value.
    init(_ value: String) {
        self.read(value)
    }

    private mutating func read(_ value: String) {
        for (name, argument) in Self.directives(value) {
            switch name {
            case "max-age": self.maxAge = self.maxAge ?? Self.deltaSeconds(argument)
            case "s-maxage": self.hasSharedMaxAge = true
            case "min-fresh": self.minFresh = self.minFresh ?? Self.deltaSeconds(argument)
            case "no-cache": self.noCache = true
            case "no-store": self.noStore = true
            case "must-revalidate": self.mustRevalidate = true
            case "public": self.isPublic = true
            case "private": self.isPrivate = true
            case "only-if-cached": self.onlyIfCached = true
            default: break
            }
        }
    }

    /// A delta-seconds value (also `Age`'s); 0 when absent or not decimal digits.
    static func deltaSeconds(_ argument: String?) -> Int {
        guard let argument, !argument.isEmpty,
              argument.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return 0 }
        let digits = argument.drop(while: { $0 == "0" })
        guard digits.count <= 10, let value = Int(digits.isEmpty ? "0" : digits) else { return Self.maximumDeltaSeconds }
        return min(value, Self.maximumDeltaSeconds)
    }

    /// The `name[=argument]` items of a comma-separated list, names lowercased, arguments unquoted.
    static func directives(_ value: String) -> [(name: String, argument: String?)] {
        var result: [(name: String, argument: String?)] = []
        var name: [UInt8] = []
        var argument: [UInt8]?
        var inQuotes = false
        var escaped = false
        func flush() {
            let trimmedName = String(decoding: name, as: UTF8.self).trimmingWhitespace().lowercased()
            if !trimmedName.isEmpty {
                result.append((trimmedName, argument.map { String(decoding: $0, as: UTF8.self).trimmingWhitespace() }))
            }
            name = []
            argument = nil
        }
        for byte in value.utf8 {
            if inQuotes {
                if escaped {
                    argument?.append(byte)
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                } else {
                    argument?.append(byte)
                }
            } else if byte == UInt8(ascii: ",") {
                flush()
            } else if argument != nil {
                if byte == UInt8(ascii: "\"") {
                    inQuotes = true
                } else {
                    argument?.append(byte)
                }
            } else if byte == UInt8(ascii: "=") {
                argument = []
            } else {
                name.append(byte)
            }
        }
        flush()
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    func trimmingWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
