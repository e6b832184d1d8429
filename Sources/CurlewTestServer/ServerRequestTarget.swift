/// A request's target split into path segments and query, cheaply and without ever failing.
///
/// Accepts origin-form (`/a/b?x=1`) and absolute-form (`http://host/a/b?x=1`); a fragment is dropped.
struct ServerRequestTarget {
    /// The path as sent (still percent-encoded), `/` when empty.
    let path: Substring
    /// Everything after the first `?` (without it), empty when there is none.
    let query: Substring
    /// The path's non-empty segments: `/bytes/13/` gives `["bytes", "13"]`.
    let segments: [Substring]

    init(uri: String) {
        // Byte-wise on purpose: this runs for every request, and the delimiters are all ASCII.
        var rest = Substring(uri)
        if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) {
            rest = rest[..<hash]
        }
        if rest.utf8.first != UInt8(ascii: "/") {
            for scheme in ["http://", "https://"] where rest.hasPrefix(scheme) {
                let afterScheme = rest.dropFirst(scheme.count)
                if let slash = afterScheme.utf8.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) {
                    rest = afterScheme[slash...]
                } else {
                    rest = "/"
                }
            }
        }
        if let question = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
            self.path = rest[..<question]
            self.query = rest[rest.utf8.index(after: question)...]
        } else {
            self.path = rest
            self.query = ""
        }
        self.segments = self.path.utf8.split(separator: UInt8(ascii: "/")).map { Substring($0) }
    }

    /// The percent-decoded value of the first `name=value` query item, `""` for a bare `name`, or `nil`.
    func queryValue(_ name: String) -> String? {
        guard !self.query.isEmpty else { return nil }
        for item in self.query.split(separator: "&", omittingEmptySubsequences: true) {
            if let equals = item.firstIndex(of: "=") {
                if item[..<equals] == name {
                    return PercentEncoding.decode(item[item.index(after: equals)...])
                }
            } else if item == name {
                return ""
            }
        }
        return nil
    }
}
