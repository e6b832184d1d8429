extension Substring {
    /// The substring without leading and trailing spaces, tabs and line breaks.
    func trimmingWhitespaceSubstring() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = self.firstIndex(where: { !isSpace($0) }), let last = self.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[first...last]
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    func trimmingWhitespace() -> String {
        String(self[...].trimmingWhitespaceSubstring())
    }
}
