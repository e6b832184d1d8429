import CurlewTransport
import Foundation
import HTTPTypes

/// The primary cache key of a request (RFC 9111 §2): its target URL with the scheme and host
/// lowercased — origin (scheme, host, port), path and query. Entries are found by this key only, so
/// a response is never used for another origin's request. No I/O.
enum CacheKey {
    /// The key of `head`, or `nil` without a scheme and authority.
    static func key(for head: HTTPRequest) -> String? {
        guard let scheme = head.scheme, let authority = head.authority, !authority.isEmpty else { return nil }
        let path = (head.path?.isEmpty ?? true) ? "/" : (head.path ?? "/")
        return "\(scheme.lowercased())://\(authority.lowercased())\(path)"
    }

    /// The key of a GET of `url`, or `nil` when it is not absolute.
    static func key(for url: URL) -> String? {
        self.key(for: TransferRequest(url: url).head)
    }
}
