import Foundation
import HTTPTypes

/// When a failed request is sent again, and after how long: attempts, exponential backoff with full
/// jitter, `Retry-After`, and which methods and conditions qualify.
///
/// A request is retried only when every one of these holds:
///
/// - fewer than ``maximumAttempts`` attempts were made;
/// - its method is in ``retryableMethods`` (by default the idempotent ones: `GET`, `HEAD`, `PUT`,
///   `DELETE`, `OPTIONS`, `TRACE`) — a `POST` is never sent twice unless asked for;
/// - the attempt ended in a retryable way: a response whose status is in ``retryableStatuses``
///   (408, 429, 502, 503, 504), a timeout (connect, idle or total), a refused connection, or a
///   connection reset or closed **before any response byte** (a connection that broke during the
///   response may have been processed by the server);
/// - the server's `Retry-After`, if any, asks for no longer than ``maximumRetryAfter``.
///
/// The wait before retry *n* (1 for the first retry) is `Retry-After` when the response has one (in
/// seconds or as an HTTP date), and otherwise "full jitter": a uniformly random duration between
/// zero and `min(maximumBackoff, initialBackoff × backoffMultiplier^(n-1))`, which spreads the
/// retries of many clients instead of synchronising them.
///
/// ```swift
/// let response = try await engine.execute(request, retry: .default)
/// print(response.metrics.retryCount)          // how many times it was sent again
///
/// operation.retryPolicy = RetryPolicy(maximumAttempts: 5, initialBackoff: .milliseconds(100))
/// ```
///
/// A policy decides for one request. When a server fails every request, many requests retrying on
/// their own multiply its load just when it can least take it; a ``RetryBudget`` shared by them caps
/// their retries together (by default at 20 % of their first attempts, plus 10 per 10 seconds), and a
/// retry it refuses is not made. ``TransferEngine/execute(_:retry:)`` draws on the engine's budget,
/// the operations of a `RequestOperationManager` on the manager's (its `retryBudget`); a
/// `RequestOperation` on its own has none unless given one.
///
/// ``decide(after:method:attempt:now:using:)`` is the whole decision, with no I/O: tests pass in the
/// clock and the random source.
public struct RetryPolicy: Sendable, Hashable {
    /// The most attempts in all, the first included (1: never retry).
    public var maximumAttempts: Int
    /// The cap of the first retry's random wait.
    public var initialBackoff: Duration
    /// The largest cap of a random wait, however many retries came before.
    public var maximumBackoff: Duration
    /// How much the cap grows from one retry to the next.
    public var backoffMultiplier: Double
    /// Response statuses that are retried.
    public var retryableStatuses: Set<Int>
    /// Methods that are retried.
    public var retryableMethods: Set<HTTPRequest.Method>
    /// The longest `Retry-After` honoured: a server asking for a longer wait is not retried.
    public var maximumRetryAfter: Duration

    /// The idempotent methods (RFC 9110 §9.2.2): sending one twice has the effect of sending it once.
    public static let idempotentMethods: Set<HTTPRequest.Method> = [.get, .head, .put, .delete, .options, .trace]

    /// Creates a policy; every parameter has a default.
    ///
    /// - Parameters:
    ///   - maximumAttempts: The most attempts in all (at least 1). Default 3.
    ///   - initialBackoff: The cap of the first retry's random wait. Default 0.5 s.
    ///   - maximumBackoff: The largest cap of a random wait. Default 30 s.
    ///   - backoffMultiplier: How much the cap grows per retry. Default 2.
    ///   - retryableStatuses: Statuses that are retried. Default 408, 429, 502, 503, 504.
    ///   - retryableMethods: Methods that are retried. Default ``idempotentMethods``.
    ///   - maximumRetryAfter: The longest `Retry-After` honoured. Default 60 s.
    public init(
        maximumAttempts: Int = 3,
        initialBackoff: Duration = .milliseconds(500),
        maximumBackoff: Duration = .seconds(30),
        backoffMultiplier: Double = 2,
        retryableStatuses: Set<Int> = [408, 429, 502, 503, 504],
        retryableMethods: Set<HTTPRequest.Method> = RetryPolicy.idempotentMethods,
        maximumRetryAfter: Duration = .seconds(60)
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.backoffMultiplier = backoffMultiplier
        self.retryableStatuses = retryableStatuses
        self.retryableMethods = retryableMethods
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// Three attempts, waits capped at 0.5 s then 1 s, the statuses and conditions above.
    public static let `default` = RetryPolicy()

    /// Never retries.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// Whether and when to send a request again after one attempt.
    ///
    /// - Parameters:
    ///   - outcome: The attempt's response head, or its failure.
    ///   - method: The request's method.
    ///   - attempt: The attempt that just ended, counting from 1.
    ///   - now: The current time, for a `Retry-After` given as a date.
    ///   - random: The source of the backoff's jitter.
    /// - Returns: ``RetryDecision/retry(after:)`` with the wait, or ``RetryDecision/doNotRetry``.
    public func decide(
        after outcome: Result<HTTPResponse, TransferError>,
        method: HTTPRequest.Method,
        attempt: Int,
        now: Date = Date(),
        using random: inout some RandomNumberGenerator
    ) -> RetryDecision {
        guard attempt < self.maximumAttempts, self.retryableMethods.contains(method) else { return .doNotRetry }
        switch outcome {
        case .success(let head):
            guard self.retryableStatuses.contains(head.status.code) else { return .doNotRetry }
            if let value = head.headerFields[.retryAfter] {
                if let wait = RetryAfter.parse(value, now: now) {
                    return wait <= self.maximumRetryAfter ? .retry(after: wait) : .doNotRetry
                }
            }
            return .retry(after: self.backoff(beforeRetry: attempt, using: &random))
        case .failure(let error):
            guard Self.isRetryable(error) else { return .doNotRetry }
            return .retry(after: self.backoff(beforeRetry: attempt, using: &random))
        }
    }

    /// ``decide(after:method:attempt:now:using:)`` with the system's random source.
    public func decide(after outcome: Result<HTTPResponse, TransferError>, method: HTTPRequest.Method, attempt: Int) -> RetryDecision {
        var random = SystemRandomSource()
        return self.decide(after: outcome, method: method, attempt: attempt, using: &random)
    }

    /// Whether a failure may be retried: a timeout, a refused connection, or a connection that broke
    /// or closed before any response byte (curl 52, "empty reply", is exactly that).
    static func isRetryable(_ error: TransferError) -> Bool {
        switch error.code {
        case .timedOut, .cannotConnectToHost:
            return true
        case .networkConnectionLost:
            return !error.responseStarted
        case .badServerResponse:
            return error.curlCode == 52 && !error.responseStarted
        default:
            return false
        }
    }

    /// The random wait before retry `retry` (from 1): full jitter under the exponential cap.
    func backoff(beforeRetry retry: Int, using random: inout some RandomNumberGenerator) -> Duration {
        let initial = Self.seconds(self.initialBackoff)
        let exponential = initial * pow(max(self.backoffMultiplier, 1), Double(max(retry - 1, 0)))
        let cap = min(Self.seconds(self.maximumBackoff), exponential)
        guard cap > 0, cap.isFinite else { return .zero }
        return .seconds(Double.random(in: 0...cap, using: &random))
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// What to do after an attempt: send the request again after a wait, or not.
public enum RetryDecision: Sendable, Hashable {
    /// Send the request again after this wait.
    case retry(after: Duration)
    /// Keep the attempt's outcome.
    case doNotRetry
}

/// The system's random numbers (`SystemRandomNumberGenerator`) in a value with storage of its own.
///
/// `SystemRandomNumberGenerator` has no stored properties, and an `inout` of a value without storage
/// is given a placeholder address that every thread shares (its protocol witness table's):
/// ThreadSanitizer's exclusivity checks then report two threads deciding retries at once as a race.
/// One byte of storage gives each variable an address of its own.
struct SystemRandomSource: RandomNumberGenerator {
    private var system = SystemRandomNumberGenerator()
    private let storage: UInt8 = 0

    mutating func next() -> UInt64 {
        self.system.next()
    }
}
