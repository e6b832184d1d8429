import CurlewOperations
import CurlewTransport

/// A `RequestInterceptor` as an app writes one for a bearer token: it sets the current token on
/// every attempt, and on the first 401 refreshes it (`"stale"`, then `"fresh"`, what
/// `Route.bearer(token: "fresh")` accepts) and asks for a retry. It counts what it did, and notes
/// whether it ever ran on the network context, which an interceptor must not.
public final class BearerInterceptor: RequestInterceptor {
    /// The token set on the next attempt.
    package let token = Locked("stale")
    /// Attempts adapted so far.
    package let adapted = Locked(0)
    /// Refreshes so far (at most one).
    package let refreshes = Locked(0)
    /// Whether a call ran on the network context.
    package let ranOnContext = Locked(false)
    private let scheduler: any TransferScheduler

    /// - Parameter scheduler: The scheduler of the engine the requests run on.
    public init(scheduler: any TransferScheduler) {
        self.scheduler = scheduler
    }

    public func adapt(_ request: TransferRequest, attempt: Int) async throws -> TransferRequest {
        if self.scheduler.isOnContext { self.ranOnContext.set(true) }
        self.adapted.withLock { $0 += 1 }
        var request = request
        try request.setHeaderField("Authorization", value: "Bearer \(self.token.value)")
        return request
    }

    public func retry(_ request: TransferRequest, after outcome: Result<TransferResponse, TransferError>, attempt: Int) async
        -> RetryDecision
    {
        if self.scheduler.isOnContext { self.ranOnContext.set(true) }
        guard case .success(let response) = outcome, response.head.status == .unauthorized, self.refreshes.value == 0 else {
            return .doNotRetry
        }
        self.refreshes.withLock { $0 += 1 }
        self.token.set("fresh")
        return .retry(after: .zero)
    }
}
