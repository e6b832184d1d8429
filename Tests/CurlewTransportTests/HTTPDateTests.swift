import Foundation
import HTTPTypes
import Testing
@testable import CurlewTransport

/// HTTP dates in the three forms RFC 9110 §5.6.7 makes recipients accept, and `Retry-After` read
/// through them. No I/O; the present is passed in.
@Suite("HTTP dates")
struct HTTPDateTests {
    /// 2001-09-09 01:46:40 UTC.
    static let now = Date(timeIntervalSince1970: 1_000_000_000)
    /// Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example.
    static let example = Date(timeIntervalSince1970: 784_111_777)

    @Test("IMF-fixdate, RFC 850 and asctime name the same instant", arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "  Sun, 06 Nov 1994 08:49:37 GMT\t",
    ])
    func threeForms(_ text: String) {
        #expect(HTTPDate.parse(text, now: Self.now) == Self.example)
    }

    @Test("asctime with a two-digit day, and a leap day")
    func asctimeDays() {
        #expect(HTTPDate.parse("Thu Jan 01 00:00:30 1970", now: Self.now) == Date(timeIntervalSince1970: 30))
        #expect(HTTPDate.parse("Tue Feb 29 00:00:00 2000", now: Self.now) == Date(timeIntervalSince1970: 951_782_400))
        #expect(HTTPDate.parse("Thu Feb 29 00:00:00 2001", now: Self.now) == nil)
    }

    /// RFC 9110: a two-digit year more than 50 years in the future is the most recent past year
    /// with those digits.
    @Test("an RFC 850 two-digit year is the nearest one at most 50 years ahead")
    func twoDigitYears() {
        // In 2001, `51` is 2051 (50 years ahead) and `52` is 1952.
        #expect(HTTPDate.parse("Sunday, 01-Jan-51 00:00:00 GMT", now: Self.now) == Date(timeIntervalSince1970: 2_556_144_000))
        #expect(HTTPDate.parse("Tuesday, 01-Jan-52 00:00:00 GMT", now: Self.now) == Date(timeIntervalSince1970: -568_080_000))
        // In 2090, `94` is 2094, no longer 1994.
        let later = Date(timeIntervalSince1970: 3_786_912_000)  // 2090-01-01
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: later) == Date(timeIntervalSince1970: 3_939_871_777))
    }

    @Test("garbage is not a date", arguments: [
        "", "GMT", "soon", "0", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT extra", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sunday, 6-Nov-94 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT", "Sunday, 06 Nov 1994 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94", "Sun Nov 06 08:49:37 1994 GMT", "Foo, 06 Nov 1994 08:49:37 GMT",
        "Sun, 31 Apr 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " ", count: 100),
        "Sun, 0x Nov 1994 08:49:37 GMT", "Sun,  06 Nov 1994 08:49:37 GMT",
    ])
    func garbage(_ text: String) {
        #expect(HTTPDate.parse(text, now: Self.now) == nil)
    }

    @Test("Retry-After as an RFC 850 or asctime date is honoured", arguments: [
        "Thursday, 01-Jan-70 00:00:30 GMT",
        "Thu Jan  1 00:00:30 1970",
    ])
    func retryAfterInOldForms(_ value: String) {
        var head = HTTPResponse(status: .serviceUnavailable)
        head.headerFields[.retryAfter] = value
        var random = RetryPolicyTests.FixedRandom(value: .max)
        let policy = RetryPolicy(maximumAttempts: 3, initialBackoff: .seconds(1), maximumBackoff: .seconds(10))
        // The RFC 850 year `70` is 1970 at this `now` (2070 would be more than 50 years ahead).
        let now = Date(timeIntervalSince1970: 0)
        #expect(RetryAfter.parse(value, now: now) == .seconds(30))
        #expect(policy.decide(after: .success(head), method: .get, attempt: 1, now: now, using: &random) == .retry(after: .seconds(30)))
    }
}
