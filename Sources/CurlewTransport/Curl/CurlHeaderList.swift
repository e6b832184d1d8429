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

/// A header list of one line that lives as long as the process and is never changed, so any number
/// of transfers on any thread may hand it to curl, which only reads it.
struct StaticHeaderList: @unchecked Sendable {  // immutable after init; curl only reads the list
    /// The one line, as given.
    let line: String
    let raw: UnsafeMutablePointer<curl_slist>?

    init(_ line: String) {
        self.line = line
        self.raw = curl_slist_append(nil, line)
    }

    /// `Accept-Encoding` with the encodings curl decodes, or `nil` where they are not known
    /// (``LibCurl/acceptedEncodings``).
    static let acceptEncoding: StaticHeaderList? = LibCurl.acceptedEncodings.map { StaticHeaderList("Accept-Encoding: \($0)") }
}
