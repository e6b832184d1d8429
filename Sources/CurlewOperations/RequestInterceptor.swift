import CurlewTransport

/// Adapts a ``RequestOperation``'s request before each attempt and decides, after each attempt,
/// whether to send it again: Alamofire's `RequestAdapter` and `RequestRetrier` in one protocol.
///
/// Both methods are `async` and run on Swift's cooperative pool — never on the network context,
/// which every transfer of an engine shares — so an interceptor may itself await a request (to
/// refresh a token, say). While it adapts or decides, the operation is executing; cancelling it then
/// finishes it at once (the interceptor's task is cancelled too).
///
/// An interceptor that refreshes a bearer token once when the server answers 401:
///
/// ```swift
/// actor TokenStore { var token = "expired"; func refresh() async { token = await fetchToken() } }
///
/// struct BearerInterceptor: RequestInterceptor {
///     let store: TokenStore
///
///     func adapt(_ request: TransferRequest, attempt: Int) async throws -> TransferRequest {
///         var request = request
///         request.head.headerFields[.authorization] = "Bearer \(await store.token)"
///         return request
///     }
///
///     func retry(_ request: TransferRequest, after outcome: Result<TransferResponse, TransferError>,
///                attempt: Int) async -> RetryDecision {
///         guard case .success(let response) = outcome, response.head.status == .unauthorized, attempt == 1 else {
///             return .doNotRetry
///         }
///         await store.refresh()
///         return .retry(after: .zero)
///     }
/// }
///
/// operation.interceptor = BearerInterceptor(store: tokens)
/// ```
public protocol RequestInterceptor: Sendable {
    /// The request to send for attempt `attempt` (from 1), made from the operation's own
    /// ``RequestOperation/request``. Throwing fails the operation with that error. The default
    /// returns `request` unchanged.
    func adapt(_ request: TransferRequest, attempt: Int) async throws -> TransferRequest

    /// Whether to send the request again after attempt `attempt` (from 1) ended with `outcome` — a
    /// response (any status: a 401 is a response) or a transfer failure. `RetryDecision/doNotRetry`
    /// hands the decision to the operation's ``RequestOperation/retryPolicy``. The default returns
    /// `RetryDecision/doNotRetry`.
    func retry(_ request: TransferRequest, after outcome: Result<TransferResponse, TransferError>, attempt: Int) async
        -> RetryDecision
}

extension RequestInterceptor {
    public func adapt(_ request: TransferRequest, attempt: Int) async throws -> TransferRequest {
        request
    }

    public func retry(_ request: TransferRequest, after outcome: Result<TransferResponse, TransferError>, attempt: Int) async
        -> RetryDecision
    {
        .doNotRetry
    }
}
