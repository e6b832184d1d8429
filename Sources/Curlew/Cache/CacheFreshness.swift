import CurlewTransport
import Foundation
import HTTPTypes

/// How long a stored response stays fresh, and how old it is (RFC 9111 §4.2), for a private cache.
/// No I/O: the present is passed in.
///
/// The lifetime is the response's `max-age`, else its `Expires` minus its `Date` (an `Expires` that
/// is not a date means already expired), else zero: the cache computes no heuristic lifetime, so a
/// response without explicit freshness is stored only to be revalidated. `s-maxage` is a shared
/// cache's and is ignored.
enum CacheFreshness {
    /// The freshness lifetime of `entry`, in seconds.
    static func lifetime(of entry: CachedResponse) -> TimeInterval {
        self.lifetime(of: entry.head, receivedAt: entry.responseTime)
    }

    /// The freshness lifetime of a response with `head` that arrived at `responseTime`, in seconds.
    static func lifetime(of head: HTTPResponse, receivedAt responseTime: Date) -> TimeInterval {
        let control = CacheControl(head.headerFields)
        if let maxAge = control.maxAge { return TimeInterval(maxAge) }
        guard let expiresValue = head.headerFields[.expires] else { return 0 }
        guard let expires = HTTPDate.parse(expiresValue, now: responseTime) else { return 0 }
        return max(0, expires.timeIntervalSince(Self.dateValue(of: head, receivedAt: responseTime)))
    }

    /// The current age of `entry` at `now`, in seconds (RFC 9111 §4.2.3): the age it had when it
    /// arrived — from its `Date`, its `Age`, and the time the request took — plus the time since.
    static func currentAge(of entry: CachedResponse, now: Date) -> TimeInterval {
        let apparentAge = max(0, entry.responseTime.timeIntervalSince(Self.dateValue(of: entry.head, receivedAt: entry.responseTime)))
        let ageValue = TimeInterval(CacheControl.deltaSeconds(entry.head.headerFields[.age]?.trimmingWhitespace()))
        let responseDelay = max(0, entry.responseTime.timeIntervalSince(entry.requestTime))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        let residentTime = max(0, now.timeIntervalSince(entry.responseTime))
        return correctedInitialAge + residentTime
    }

    /// The response's `Date`, or the time it arrived when it has none (or an unreadable one).
    private static func dateValue(of head: HTTPResponse, receivedAt responseTime: Date) -> Date {
        head.headerFields[.date].flatMap { HTTPDate.parse($0, now: responseTime) } ?? responseTime
    }
}
