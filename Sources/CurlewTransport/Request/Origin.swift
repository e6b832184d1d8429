import Foundation
import HTTPTypes

/// Where a request goes, as secrets are bound to it (RFC 6454): scheme, host and port. No I/O.
///
/// Built from exactly what curl is handed (``RequestTarget``), so two requests of the same origin
/// reach the same server. Only what cannot change the server is normalised: the scheme and the
/// host's ASCII letters are lowercased, and an absent or empty port is the scheme's default (80 for
/// `http`, 443 for `https`). Everything else compares as written: `example.com.` and `example.com`,
/// or a percent-encoded host and its decoded form, are different origins, so a secret is withheld
/// rather than sent when two spellings might differ. User information is not part of an origin.
package struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`.
    package let scheme: String
    /// The host, ASCII-lowercased; an IPv6 literal keeps its brackets (`[::1]`).
    package let host: String
    /// The port, the scheme's default when the URL names none.
    package let port: Int

    /// The origin of an `http` or `https` URL with a host; `nil` for anything else.
    package init?(_ url: URL) {
        guard let target = try? RequestTarget(validating: url.absoluteString) else { return nil }
        self.init(target)
    }

    /// The origin a request's head goes to; `nil` when the head is not a valid `http`/`https` target
    /// (such a request fails with ``TransferError/Code/badURL`` when it starts).
    package init?(_ head: HTTPRequest) {
        guard let target = try? RequestTarget(validating: head) else { return nil }
        self.init(target)
    }

    init(_ target: RequestTarget) {
        let authority = Self.asciiLowercased(target.authority)
        // The port follows the last colon after the host; an IPv6 literal's colons are inside brackets.
        let hostEnd = authority.lastIndex(of: "]") ?? authority.startIndex
        let colon = authority[hostEnd...].lastIndex(of: ":")
        let defaultPort = target.scheme == "https" ? 443 : 80
        self.scheme = target.scheme
        if let colon {
            self.host = String(authority[..<colon])
            // RequestTarget has checked the digits: 1...65535, or none.
            self.port = Int(authority[authority.index(after: colon)...]) ?? defaultPort
        } else {
            self.host = authority
            self.port = defaultPort
        }
    }

    /// `scheme://host:port`, the port always written.
    package var description: String {
        "\(self.scheme)://\(self.host):\(self.port)"
    }

    /// `text` with `A`–`Z` lowered and every other byte kept (`String.lowercased()` would also map
    /// non-ASCII letters, such as the Kelvin sign to `k`).
    private static func asciiLowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return text }
        return String(decoding: text.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
