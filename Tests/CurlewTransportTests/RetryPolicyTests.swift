import Foundation
import HTTPTypes
import Testing
@testable import CurlewTransport

/// The retry decision as a value: conditions, methods, attempts, backoff with full jitter, and
/// `Retry-After` — with the clock and the random source passed in.
@Suite("Retry policy")
struct RetryPolicyTests {
    /// A generator that always returns the same value: `Double.random(in: 0...cap)` then lands on the
    /// cap for `.max` and on zero for 1. (Not 0: the standard library's unbiased sampling would reject
    /// a constant 0 for ever.)
    struct FixedRandom: RandomNumberGenerator {
        var value: UInt64
        mutating func next() -> UInt64 { self.value }
    }

    static func failure(_ code: TransferError.Code, curl: Int? = nil, started: Bool = false) -> Result<HTTPResponse, TransferError> {
        var error = TransferError(code, "x", curlCode: curl)
        error.responseStarted = started
        return .failure(error)
    }

    static func response(_ status: Int, retryAfter: String? = nil) -> Result<HTTPResponse, TransferError> {
        var head = HTTPResponse(status: .init(code: status))
        if let retryAfter { head.headerFields[.retryAfter] = retryAfter }
        return .success(head)
    }

    static let policy = RetryPolicy(maximumAttempts: 3, initialBackoff: .seconds(1), maximumBackoff: .seconds(10))

    static func decide(_ outcome: Result<HTTPResponse, TransferError>, _ method: HTTPRequest.Method = .get,
                       attempt: Int = 1, now: Date = Date(timeIntervalSince1970: 0)) -> RetryDecision {
        var random = FixedRandom(value: .max)
        return Self.policy.decide(after: outcome, method: method, attempt: attempt, now: now, using: &random)
    }

    @Test("what is retried (the first retry waits up to 1 s)", arguments: [
        ("timed out", failure(.timedOut), true),
        ("refused", failure(.cannotConnectToHost), true),
        ("reset before any response byte", failure(.networkConnectionLost), true),
        ("reset during the response", failure(.networkConnectionLost, started: true), false),
        ("empty reply (curl 52)", failure(.badServerResponse, curl: 52), true),
        ("invalid status line (curl 1)", failure(.badServerResponse, curl: 1), false),
        ("unknown host", failure(.cannotFindHost), false),
        ("certificate", failure(.serverCertificateUntrusted), false),
        ("cancelled", failure(.cancelled), false),
        ("too large", failure(.responseTooLarge), false),
        ("408", response(408), true), ("429", response(429), true), ("502", response(502), true),
        ("503", response(503), true), ("504", response(504), true),
        ("200", response(200), false), ("404", response(404), false), ("500", response(500), false),
        ("501", response(501), false),
    ])
    func conditions(_ name: String, _ outcome: Result<HTTPResponse, TransferError>, _ retried: Bool) {
        let decision = Self.decide(outcome)
        if retried {
            #expect(decision == .retry(after: .seconds(1)), "\(name)")
        } else {
            #expect(decision == .doNotRetry, "\(name)")
        }
    }

    @Test("only idempotent methods by default", arguments: [
        (HTTPRequest.Method.get, true), (.head, true), (.put, true), (.delete, true), (.options, true), (.trace, true),
        (.post, false), (.patch, false), (.connect, false),
    ])
    func methods(_ method: HTTPRequest.Method, _ retried: Bool) {
        #expect((Self.decide(Self.failure(.timedOut), method) != .doNotRetry) == retried)
        var everything = Self.policy
        everything.retryableMethods.insert(method)
        var random = FixedRandom(value: 1)
        #expect(everything.decide(after: Self.failure(.timedOut), method: method, attempt: 1, using: &random) != .doNotRetry)
    }

    @Test func attemptsAreCounted() {
        #expect(Self.decide(Self.response(503), attempt: 1) == .retry(after: .seconds(1)))
        #expect(Self.decide(Self.response(503), attempt: 2) == .retry(after: .seconds(2)))
        #expect(Self.decide(Self.response(503), attempt: 3) == .doNotRetry)
        var random = FixedRandom(value: 1)
        #expect(RetryPolicy.none.decide(after: Self.response(503), method: .get, attempt: 1, using: &random) == .doNotRetry)
    }

    @Test("exponential caps, full jitter", arguments: [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (40, 10.0)])
    func backoff(_ retry: Int, _ capSeconds: Double) {
        var top = FixedRandom(value: .max)
        #expect(Self.policy.backoff(beforeRetry: retry, using: &top) == .seconds(capSeconds))
        var bottom = FixedRandom(value: 1)
        #expect(Self.policy.backoff(beforeRetry: retry, using: &bottom) == .zero)
        // A real source spreads the waits over the whole range.
        var system = SystemRandomNumberGenerator()
        let waits = (0..<200).map { _ in Self.policy.backoff(beforeRetry: retry, using: &system) }
        #expect(waits.allSatisfy { $0 >= .zero && $0 <= .seconds(capSeconds) })
        #expect(Set(waits).count > 150)
    }

    @Test("Retry-After in seconds or as a date is honoured", arguments: [
        ("0", Duration.zero), ("7", .seconds(7)), (" 12 ", .seconds(12)),
        ("Thu, 01 Jan 1970 00:00:30 GMT", .seconds(30)),
        ("Wed, 31 Dec 1969 23:59:00 GMT", .zero),  // a date past: at once
    ])
    func retryAfter(_ value: String, _ wait: Duration) {
        #expect(Self.decide(Self.response(503, retryAfter: value)) == .retry(after: wait))
    }

    @Test("a Retry-After beyond the maximum is not waited for", arguments: ["61", "Thu, 01 Jan 1970 01:00:00 GMT", "99999999999999999"])
    func retryAfterTooLong(_ value: String) {
        #expect(Self.decide(Self.response(429, retryAfter: value)) == .doNotRetry)
    }

    @Test("an unreadable Retry-After falls back to the backoff", arguments: ["soon", "-1", "1.5", "Thu, 32 Jan 1970 00:00:00 GMT", ""])
    func unreadableRetryAfter(_ value: String) {
        #expect(Self.decide(Self.response(503, retryAfter: value)) == .retry(after: .seconds(1)))
    }

    @Test func retryAfterDates() {
        let now = Date(timeIntervalSince1970: 1_000_000_000)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == Date(timeIntervalSince1970: 784_111_777))
        for invalid in ["Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT",
                        "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 31 Feb 1994 08:49:37 GMT"] {
            #expect(HTTPDate.parse(invalid, now: now) == nil, "\(invalid)")
        }
    }
}
