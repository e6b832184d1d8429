import CurlewTransport
import Foundation
import HTTPTypes

/// What a cache does with a request, given the responses stored for its URL (RFC 9111 §4). No I/O:
/// the present is passed in.
enum CacheLookup {
    /// The decision for one request.
    enum Decision: Hashable {
        /// The request is not one the cache takes part in (``CacheEligibility/isEligible(_:)``).
        case bypass
        /// Nothing stored can be used: ask the server.
        case miss
        /// This entry (at index `index` of the candidates) answers, at this age in seconds.
        case fresh(index: Int, age: Int)
        /// This entry is stale or must be revalidated: ask the server with these conditional fields.
        case revalidate(index: Int, conditions: HTTPFields)
        /// `only-if-cached` and nothing fresh: answer 504 (RFC 9111 §5.2.1.7) without asking.
        case unsatisfiable
    }

    /// Decides for `request` among `candidates`, the entries stored under its key.
    ///
    /// The entry is the newest (latest response time) whose `Vary` fields and body form match the
    /// request (``CacheVariant/matches(_:_:)``). It answers when fresh (lifetime above current age)
    /// and neither it (`no-cache`) nor the request (`no-cache`, `max-age=0`, a `max-age` below its
    /// age, a `min-fresh` above what is left of its lifetime) wants revalidation. Otherwise it is
    /// revalidated when it has a validator; without one it is a miss, and the response replaces it.
    /// A stale response is never used without revalidation.
    static func decide(_ request: TransferRequest, candidates: [CachedResponse], now: Date) -> Decision {
        guard CacheEligibility.isEligible(request) else { return .bypass }
        let requestControl = CacheControl(request.head.headerFields)
        var chosen: Int?
        for (index, entry) in candidates.enumerated() where CacheVariant.matches(entry, request) {
            if let best = chosen, candidates[best].responseTime >= entry.responseTime { continue }
            chosen = index
        }
        guard let index = chosen else { return requestControl.onlyIfCached ? .unsatisfiable : .miss }
        let entry = candidates[index]
        let age = CacheFreshness.currentAge(of: entry, now: now)
        let lifetime = CacheFreshness.lifetime(of: entry)
        var fresh = lifetime > age && !CacheControl(entry.head.headerFields).noCache && !requestControl.noCache
        if let maxAge = requestControl.maxAge, maxAge == 0 || age > TimeInterval(maxAge) { fresh = false }
        if let minFresh = requestControl.minFresh, lifetime - age < TimeInterval(minFresh) { fresh = false }
        if fresh { return .fresh(index: index, age: Int(age.rounded(.down))) }
        if requestControl.onlyIfCached { return .unsatisfiable }
        let conditions = CacheValidation.conditions(for: entry)
        return conditions.isEmpty ? .miss : .revalidate(index: index, conditions: conditions)
    }
}
