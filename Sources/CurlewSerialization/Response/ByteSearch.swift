/// Byte searches shared by the scanners that read a body before Foundation does
/// (``XMLMarkupScanner``, ``XMLDeclaration``, ``JSONParser``…): linear, with no allocation.
extension UnsafeRawBufferPointer {
    /// Whether `pattern` starts at `index` (`false` when it would run past the end).
    func hasBytes(_ pattern: [UInt8], at index: Int) -> Bool {
        index >= 0 && pattern.count <= self.count - index && self[index..<index + pattern.count].elementsEqual(pattern)
    }

    /// The first index of `pattern` (a few bytes) that starts and ends in `range`. Linear in the
    /// range, as the pattern is short.
    func firstIndex(of pattern: [UInt8], in range: Range<Int>) -> Int? {
        guard let first = pattern.first else { return nil }
        var index = range.lowerBound
        while index < range.upperBound, let candidate = self[index..<range.upperBound].firstIndex(of: first) {
            if candidate + pattern.count > range.upperBound { return nil }
            if self.hasBytes(pattern, at: candidate) { return candidate }
            index = candidate + 1
        }
        return nil
    }

    /// White space as XML and JSON define it: space, tab, CR, LF.
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
