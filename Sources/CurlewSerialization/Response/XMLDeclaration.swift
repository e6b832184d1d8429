/// The encoding an XML declaration (`<?xml version="1.0" encoding="…"?>`) names, read the way both
/// libxml2 and Foundation's property-list parser find it, and whether the scanners can read
/// markup in it as bytes.
enum XMLDeclaration {
    private static let start = Array("<?xml".utf8)
    private static let end = Array("?>".utf8)
    private static let encodingKeyword = Array("encoding".utf8)

    /// Every name given to `encoding` in the declaration at the start of `bytes` (none without a
    /// declaration). Lenient on purpose: white space around `=` is allowed and the whole
    /// declaration up to `?>` is searched, so a parser's stricter reading finds nothing this misses.
    static func encodings(in bytes: UnsafeRawBufferPointer) -> [String] {
        Self.encodingValues(in: bytes).map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    /// Where each name given to `encoding` lies in `bytes`, as ``encodings(in:)`` finds them.
    static func encodingValues(in bytes: UnsafeRawBufferPointer) -> [Range<Int>] {
        guard bytes.hasBytes(Self.start, at: 0) else { return [] }
        let end = bytes.firstIndex(of: Self.end, in: 0..<bytes.count) ?? bytes.count
        var values: [Range<Int>] = []
        var index = 0
        while let found = bytes.firstIndex(of: Self.encodingKeyword, in: index..<end) {
            index = found + Self.encodingKeyword.count
            while index < end, UnsafeRawBufferPointer.isSpace(bytes[index]) { index += 1 }
            guard index < end, bytes[index] == UInt8(ascii: "=") else { continue }
            index += 1
            while index < end, UnsafeRawBufferPointer.isSpace(bytes[index]) { index += 1 }
            guard index < end, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else { continue }
            let quote = bytes[index]
            let valueEnd = bytes[(index + 1)..<end].firstIndex(of: quote) ?? end
            values.append((index + 1)..<valueEnd)
            index = valueEnd
        }
        return values
    }

    /// Whether markup stays ASCII bytes in the encoding `name` (any case): UTF-8, ASCII, and the
    /// single-byte ISO 8859 and Windows code pages. In any other (UTF-7, EBCDIC, Shift_JIS…) a
    /// byte count says nothing about the markup.
    static func isASCIITransparent(_ name: String) -> Bool {
        let name = name.lowercased()
        if ["utf-8", "utf8", "us-ascii", "ascii", "latin1"].contains(name) { return true }
        for prefix in ["iso-8859-", "iso8859-", "iso_8859-", "windows-125", "cp125"] where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            return !rest.isEmpty && rest.count <= 2 && rest.allSatisfy { $0.isASCII && $0.isNumber }
        }
        return false
    }
}
