/// Retries shared out among many requests: together they may retry at most ``retryRatio`` times
/// their first attempts of the last ``window``, plus ``minimumRetries`` whatever the traffic — so a
/// server that fails every request sees about 1.2 times its usual load (by default), not three
/// times. The model is Finagle's retry budget (gRPC's retry throttling does the same with a token
/// bucket).
///
/// A ``RetryPolicy`` decides each request's retries alone: 500 requests failing at once with
/// ``RetryPolicy/default`` are 1,500 attempts, just when the server is least able to take them. A
/// budget refuses the retries beyond its share: a refused retry is not made, and the request ends
/// with its last attempt's outcome, as when it has no attempt left. The first attempts of requests
/// that may retry are counted; only the retries a ``RetryPolicy`` asks for draw on the budget (a
/// `RequestInterceptor`'s own retry, such as one after refreshing a token, does not).
///
/// Each `TransferEngine` has one for ``TransferEngine/execute(_:retry:)``, and each
/// `RequestOperationManager` one for its operations (`retryBudget`, which can be shared or turned off):
///
/// ```swift
/// api.retryBudget = RetryBudget(retryRatio: 0.1)       // stricter
/// let shared = RetryBudget()                           // one budget for two managers of one service
/// users.retryBudget = shared; orders.retryBudget = shared
/// api.retryBudget = nil                                // every request retries as its policy says
/// ```
///
/// The decision is a value with no I/O (`RetryBudgetLedger`); this class shares one under a lock.
public final class RetryBudget: Sendable {
    /// Retries allowed per first attempt in the window: 0.2 (one retry per five requests) by default.
    public let retryRatio: Double
    /// Retries allowed in any window whatever the traffic, so that a client sending few requests
    /// still retries them: 10 by default.
    public let minimumRetries: Int
    /// How long a first attempt or a retry counts: 10 seconds by default (each ages out between
    /// nine tenths of it and all of it).
    public let window: Duration
    private let ledger: Locked<RetryBudgetLedger>

    /// Creates a budget with nothing spent.
    ///
    /// - Parameters:
    ///   - retryRatio: Retries allowed per first attempt in the window (0.2). Below zero is zero.
    ///   - minimumRetries: Retries allowed in any window whatever the traffic (10). Below zero is zero.
    ///   - window: How long attempts count (10 s).
    public init(retryRatio: Double = 0.2, minimumRetries: Int = 10, window: Duration = .seconds(10)) {
        let ledger = RetryBudgetLedger(retryRatio: retryRatio, minimumRetries: minimumRetries, window: window,
                                       now: .now)
        self.retryRatio = ledger.retryRatio
        self.minimumRetries = ledger.minimumRetries
        self.window = window
        self.ledger = Locked(ledger)
    }

    /// Counts the first attempt of a request that may be retried.
    package func recordFirstAttempt() {
        self.ledger.withLock { $0.recordFirstAttempt(at: .now) }
    }

    /// Whether a retry may be made now; if so, it is counted.
    package func withdrawRetry() -> Bool {
        self.ledger.withLock { $0.withdrawRetry(at: .now) }
    }
}
