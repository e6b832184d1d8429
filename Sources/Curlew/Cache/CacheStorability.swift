import CurlewTransport
import Foundation
import HTTPTypes

/// Whether a response may be stored (RFC 9111 §3, for a private cache), and the entry it makes.
/// No I/O.
enum CacheStorability {
    /// The statuses stored: those RFC 9110 §15.1 makes cacheable by default, but for 206 (partial
    /// content is not stored) and the redirects (followed by the engine, or answered to a request
    /// that asked not to follow them: an entry must not depend on that).
    static let storableStatuses: Set<Int> = [200, 203, 204, 404, 405, 410, 414, 501]

    /// Fields never stored: `Set-Cookie` (the cookie jar handled it when the response arrived; a
    /// stored copy would only put a credential in the cache) and the connection's own fields.
    static let unstoredFields: [HTTPField.Name] = [.setCookie, .connection, .transferEncoding, .te, .trailer, .upgrade]
        + ["keep-alive", "proxy-connection"].compactMap { HTTPField.Name($0) }

    /// Why a response is not stored.
    enum Refusal: Error, Hashable {
        /// The request is not one the cache takes part in (``CacheEligibility/isEligible(_:)``).
        case ineligibleRequest
        /// The response came after a redirect, from another URL.
        case redirected
        /// Its status is not one stored.
        case status
        /// `Cache-Control: no-store`.
        case noStore
        /// The request carried credentials and the response did not say `public`, `s-maxage` or
        /// `must-revalidate` (RFC 9111 §3.5).
        case authorized
        /// `Vary: *`, or a `Vary` naming a field in ``CacheVariant/unstorableVaryingNames``.
        case vary
        /// Neither explicit freshness nor a validator: it could never be used.
        case unusable
        /// The body went elsewhere than memory.
        case noBody
    }

    /// The entry for `response` to `request`, or why it is not stored.
    ///
    /// - Parameters:
    ///   - request: The request as the caller made it (without the cache's conditional fields).
    ///   - response: The response.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response arrived.
    static func entry(
        for request: TransferRequest, response: TransferResponse, requestTime: Date, responseTime: Date
    ) -> Result<CachedResponse, Refusal> {
        guard CacheEligibility.isEligible(request) else { return .failure(.ineligibleRequest) }
        guard response.metrics.redirectCount == 0 else { return .failure(.redirected) }
        let head = response.head
        guard Self.storableStatuses.contains(head.status.code), head.headerFields[.contentRange] == nil else {
            return .failure(.status)
        }
        let control = CacheControl(head.headerFields)
        guard !control.noStore else { return .failure(.noStore) }
        if CacheEligibility.isAuthorized(request) {
            guard control.isPublic || control.hasSharedMaxAge || control.mustRevalidate else { return .failure(.authorized) }
        }
        guard let names = CacheVariant.varyingNames(of: head),
              !names.contains(where: CacheVariant.unstorableVaryingNames.contains) else {
            return .failure(.vary)
        }
        let hasValidator = head.headerFields[.eTag] != nil || head.headerFields[.lastModified] != nil
        let mayBeFresh = !control.noCache && CacheFreshness.lifetime(of: head, receivedAt: responseTime) > 0
        guard hasValidator || mayBeFresh else { return .failure(.unusable) }
        guard let body = response.body else { return .failure(.noBody) }
        // Last, as it parses URLs: the response must come from the request's own URL.
        guard let key = CacheKey.key(for: request.head), CacheKey.key(for: response.url) == key else {
            return .failure(.redirected)
        }
        var stored = head
        for name in Self.unstoredFields { stored.headerFields[name] = nil }
        return .success(CachedResponse(
            key: key, url: response.url, head: stored, requestTime: requestTime, responseTime: responseTime,
            varying: CacheVariant.fields(of: request.head, named: names),
            bodyCoding: CacheVariant.bodyCoding(of: head, for: request), bodyLength: body.count))
    }
}
