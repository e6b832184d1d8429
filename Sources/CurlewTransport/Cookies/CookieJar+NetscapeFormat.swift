import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CookieJar {
    /// One line of curl's cookie list as an `HTTPCookie`; `nil` for a line that is not a cookie.
    ///
    /// curl writes each cookie in the Netscape cookie-file format, seven fields separated by tabs:
    /// domain (prefixed `#HttpOnly_` for an `HttpOnly` cookie; with a leading dot when it matches
    /// subdomains), whether subdomains match (`TRUE`/`FALSE`), path, `Secure` (`TRUE`/`FALSE`),
    /// expiry in seconds since 1970 (`0`: a session cookie), name, value.
    static func cookie(fromNetscapeLine line: String) -> HTTPCookie? {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 7 else { return nil }
        var domain = fields[0]
        let httpOnly = domain.hasPrefix("#HttpOnly_")
        if httpOnly {
            domain.removeFirst("#HttpOnly_".count)
        }
        guard !domain.isEmpty, !domain.hasPrefix("#"), let expiry = Int64(fields[4]) else { return nil }
        if fields[1] == "TRUE", !domain.hasPrefix(".") { domain = "." + domain }
        var properties: [HTTPCookiePropertyKey: Any] = [
            .domain: domain,
            .path: fields[2].isEmpty ? "/" : fields[2],
            .name: fields[5],
            .value: fields[6],
        ]
        if fields[3] == "TRUE" { properties[.secure] = "TRUE" }
        if expiry > 0 {
            properties[.expires] = Date(timeIntervalSince1970: TimeInterval(expiry))
        } else {
            properties[.discard] = "TRUE"
        }
        if httpOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        return HTTPCookie(properties: properties)
    }
}
