internal import CCurl

/// A `curl_slist` of header lines, freed when the last reference goes.
///
/// curl reads the list while the transfer runs, so the owner keeps it until the easy handle has
/// left the multi handle.
final class CurlHeaderList {
    private(set) var raw: UnsafeMutablePointer<curl_slist>?

    init() {}

    deinit {
        curl_slist_free_all(self.raw)
    }

    /// Appends `line` (curl copies it).
    func append(_ line: String) {
        if let extended = curl_slist_append(self.raw, line) {
            self.raw = extended
        }
    }

    var isEmpty: Bool { self.raw == nil }
}
