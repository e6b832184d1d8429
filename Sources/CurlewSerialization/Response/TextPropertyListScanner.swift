/// An upper bound of the values Foundation makes of a text property list (XML or OpenStep),
/// counted in the bytes before it parses them.
///
/// Text property lists cannot share objects, and Foundation parses them in linear time, but its
/// tree takes about 80 bytes per value: an OpenStep array `(a,a,a,…)` of 16 MB is 8 million values
/// and 640 MB. Foundation tries the XML parser, then the OpenStep parser on the same text, so the
/// bound covers both:
/// - XML: every value has its own start tag, so values ≤ `<` followed by a name.
/// - OpenStep: arrays hold at most one element more than their commas, dictionary entries (two
///   values each) end with `;` but for the last, and containers open with `(` or `{`.
/// A parser that cannot apply is left out: XML fails at once unless the text starts with `<`,
/// and OpenStep reads at most one value (hexadecimal data) when it does.
///
/// Counting bytes is only sound when markup characters are ASCII bytes, as in UTF-8, UTF-16 and
/// UTF-32 (where non-ASCII units can only add to the count) and the encodings
/// ``XMLDeclaration/isASCIITransparent(_:)`` accepts; a body declaring any other encoding is
/// refused. Linear, no allocation.
enum TextPropertyListScanner {
    /// Why a body is refused.
    enum Failure: Error, Equatable {
        /// The XML declaration names an encoding whose markup is not ASCII bytes.
        case unsupportedEncoding(String)
    }

    /// The most values Foundation can make of `bytes`.
    static func nodeBound(of bytes: UnsafeRawBufferPointer) throws(Failure) -> Int {
        // Foundation's encoding detection: BOMs first, a zero in the first two bytes means UTF-16,
        // otherwise an XML declaration may name the encoding.
        let wide = bytes.count >= 2
            && (bytes[0] == 0 || bytes[1] == 0 || (bytes[0], bytes[1]) == (0xFF, 0xFE) || (bytes[0], bytes[1]) == (0xFE, 0xFF))
        if wide {
            // The first character cannot be told from bytes here, so both parsers count.
            return Swift.max(Self.xmlBound(bytes), Self.openStepBound(bytes))
        }
        let text: UnsafeRawBufferPointer
        if bytes.hasBytes([0xEF, 0xBB, 0xBF], at: 0) {
            text = UnsafeRawBufferPointer(rebasing: bytes[3...])
        } else {
            if let name = XMLDeclaration.encodings(in: bytes).first(where: { !XMLDeclaration.isASCIITransparent($0) }) {
                throw .unsupportedEncoding(name)
            }
            text = bytes
        }
        // XML skips a subset of the bytes up to space: if the first byte past them is not `<`,
        // the XML parser fails there.
        let xmlApplies = text.first(where: { $0 > 0x20 }) == UInt8(ascii: "<")
        // OpenStep skips at least tab to CR and space: at a `<` it reads data, one value at most.
        let openStepApplies = text.first(where: { !(0x09...0x0D).contains($0) && $0 != 0x20 }) != UInt8(ascii: "<")
        return Swift.max(xmlApplies ? Self.xmlBound(text) : 0, openStepApplies ? Self.openStepBound(text) : 1)
    }

    /// Start tags: `<` followed by anything but `/`, `!` or `?` (zero bytes of UTF-16 and UTF-32
    /// skipped).
    private static func xmlBound(_ bytes: UnsafeRawBufferPointer) -> Int {
        var tags = 0
        var index = 0
        while index < bytes.count, let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
            var next = open + 1
            while next < bytes.count, bytes[next] == 0 { next += 1 }
            if next < bytes.count, ![UInt8(ascii: "/"), UInt8(ascii: "!"), UInt8(ascii: "?")].contains(bytes[next]) {
                tags += 1
            }
            index = open + 1
        }
        return tags
    }

    /// 1 (the top value) + array elements (`(` + `,`) + containers (`(` + `{`) + 2 per dictionary
    /// entry (`;` + `{` + 1, the strings-file form being a dictionary without braces) + 1 (the
    /// first value of a strings file, parsed once alone).
    private static func openStepBound(_ bytes: UnsafeRawBufferPointer) -> Int {
        var commas = 0, parentheses = 0, braces = 0, semicolons = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: ","): commas += 1
            case UInt8(ascii: "("): parentheses += 1
            case UInt8(ascii: "{"): braces += 1
            case UInt8(ascii: ";"): semicolons += 1
            default: break
            }
        }
        return 2 + commas + 2 * parentheses + braces + 2 * (semicolons + braces + 1)
    }
}
