import CurlewTransport
import Foundation
import HTTPTypes

/// Which stored responses an unsafe request makes obsolete (RFC 9111 §4.4). No I/O.
enum CacheInvalidation {
    /// The primary keys to drop after `request` ended with `result`.
    ///
    /// A request with an unsafe method (``CacheEligibility/isUnsafe(_:)``) drops its own URL's
    /// entries when the server answered with a non-error status (below 400) or did not answer (a
    /// failed transfer may still have changed something); with a non-error status, also those of
    /// its `Location` and `Content-Location`, when they have the request's origin. Other requests
    /// drop nothing.
    static func keys(for request: TransferRequest, result: Result<TransferResponse, TransferError>) -> [String] {
        guard CacheEligibility.isUnsafe(request.head.method), let key = CacheKey.key(for: request.head) else { return [] }
        guard case .success(let response) = result else { return [key] }
        guard response.head.status.code < 400 else { return [] }
        var keys = [key]
        guard let origin = request.url.flatMap(Self.origin) else { return keys }
        for name in [HTTPField.Name.location, .contentLocation] {
            guard let value = response.head.headerFields[name],
                  let target = URL(string: value, relativeTo: response.url)?.absoluteURL,
                  Self.origin(of: target) == origin, let targetKey = CacheKey.key(for: target),
                  !keys.contains(targetKey) else { continue }
            keys.append(targetKey)
        }
        return keys
    }

    /// `scheme://host:port` of `url`, lowercased, with the scheme's default port.
    private static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}
