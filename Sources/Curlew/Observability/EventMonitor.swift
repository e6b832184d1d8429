import CurlewTransport
import HTTPTypes

/// Hears the events a manager's requests go through, in both dialects: Alamofire's `EventMonitor`,
/// narrower. Give monitors to a manager when you make it (`RequestOperationManager(…, monitors:)`);
/// the manager's logging and metrics are monitors too.
///
/// Every method has a default that does nothing, so a monitor implements only what it needs:
///
/// ```swift
/// struct SlowRequests: EventMonitor {
///     func request(_ request: MonitoredRequest, didComplete attempt: RequestAttempt,
///                  with result: Result<TransferResponse, TransferError>, after duration: Duration?) {
///         if let duration, duration > .seconds(1) { print("slow:", attempt.head.path ?? "", duration) }
///     }
/// }
/// ```
///
/// **Order.** The events of one request come one after another, never at once, in this order:
/// ``requestDidBegin(_:)``; for each attempt, ``request(_:didAdapt:attempt:)`` (with an interceptor),
/// ``request(_:didStart:)``, ``request(_:didReceive:in:)``, ``request(_:didUpdate:in:)`` (any number of
/// times), ``request(_:didComplete:with:after:)`` and, when another attempt follows,
/// ``request(_:willRetryAfter:because:)``; last ``request(_:didFinishWith:)``. The events of different
/// requests interleave.
///
/// **Where they run.** On the thread that produces them — the engine's network context for an
/// attempt's head, progress and completion, the calling task or an operation's thread for the others —
/// so a monitor must be quick and must not block, as swift-log's and swift-metrics' handlers must not;
/// hand anything slow to a queue of your own.
///
/// **Operations.** The AFNetworking dialect's operations report their attempts through the transport
/// seam; their interceptor's adaptations and their retry decisions happen inside `RequestOperation`
/// and are not reported (an attempt numbered 2 or more is a retry).
public protocol EventMonitor: Sendable {
    /// The manager has a request to send: an async call began, or it made an operation.
    func requestDidBegin(_ request: MonitoredRequest)

    /// The interceptor adapted the request for attempt `attempt` (from 1) into `adapted` (async dialect).
    func request(_ request: MonitoredRequest, didAdapt adapted: HTTPRequest, attempt: Int)

    /// An attempt's transfer started, sending `attempt.head`.
    func request(_ request: MonitoredRequest, didStart attempt: RequestAttempt)

    /// The response head of an attempt arrived (redirects are followed first and not reported). From
    /// the engine it comes as soon as the head does; from another transport (a stub, the HTTP cache)
    /// just before the attempt completes.
    func request(_ request: MonitoredRequest, didReceive head: HTTPResponse, in attempt: RequestAttempt)

    /// Body bytes moved in either direction during an attempt.
    func request(_ request: MonitoredRequest, didUpdate progress: TransferProgress, in attempt: RequestAttempt)

    /// An attempt's transfer ended: a response (any status) or a transfer failure. `duration` runs from
    /// its start to its end; `nil` when it ended without starting (cancelled first).
    func request(
        _ request: MonitoredRequest, didComplete attempt: RequestAttempt,
        with result: Result<TransferResponse, TransferError>, after duration: Duration?
    )

    /// The request will be sent again after `wait` (async dialect): `reason` says which attempt ended
    /// how, and who decided.
    func request(_ request: MonitoredRequest, willRetryAfter wait: Duration, because reason: RetryReason)

    /// The request is over: its value was delivered with the response it was made from, or it failed
    /// — a transfer error, a cancellation, the serializer's or the interceptor's error. For a streamed
    /// response body, when the body ended.
    func request(_ request: MonitoredRequest, didFinishWith result: Result<TransferResponse, any Error>)
}

extension EventMonitor {
    public func requestDidBegin(_ request: MonitoredRequest) {}

    public func request(_ request: MonitoredRequest, didAdapt adapted: HTTPRequest, attempt: Int) {}

    public func request(_ request: MonitoredRequest, didStart attempt: RequestAttempt) {}

    public func request(_ request: MonitoredRequest, didReceive head: HTTPResponse, in attempt: RequestAttempt) {}

    public func request(_ request: MonitoredRequest, didUpdate progress: TransferProgress, in attempt: RequestAttempt) {}

    public func request(
        _ request: MonitoredRequest, didComplete attempt: RequestAttempt,
        with result: Result<TransferResponse, TransferError>, after duration: Duration?
    ) {}

    public func request(_ request: MonitoredRequest, willRetryAfter wait: Duration, because reason: RetryReason) {}

    public func request(_ request: MonitoredRequest, didFinishWith result: Result<TransferResponse, any Error>) {}
}

/// One request of a manager, as its monitors see it: the same value in each of its events.
public struct MonitoredRequest: Sendable, Hashable {
    /// Which of the manager's ways of sending made the request.
    public enum Dialect: Sendable, Hashable {
        /// An async method (a value, a response, a download, an upload, a task).
        case async
        /// An async method whose response body is streamed (`stream(…)`).
        case streaming
        /// A `RequestOperation` of the AFNetworking dialect.
        case operation
    }

    /// A number that tells the process's requests apart (increasing, never reused).
    public let id: UInt64
    /// The request as the manager prepared it, before any interceptor.
    public let head: HTTPRequest
    /// Which dialect sends it.
    public let dialect: Dialect

    /// Creates one; the manager makes these.
    public init(id: UInt64, head: HTTPRequest, dialect: Dialect) {
        self.id = id
        self.head = head
        self.dialect = dialect
    }
}

/// One attempt of a request: the transfer that sends it once.
public struct RequestAttempt: Sendable, Hashable {
    /// 1 for the first attempt, 2 for the first retry, and so on.
    public let number: Int
    /// The head as sent: after the interceptor, with the trace context's fields.
    public let head: HTTPRequest

    /// Creates one; the manager makes these.
    public init(number: Int, head: HTTPRequest) {
        self.number = number
        self.head = head
    }
}

/// Why a request is sent again: how its attempt ended, and who asked for the retry.
public struct RetryReason: Sendable {
    /// Who decided to retry.
    public enum Decider: Sendable, Hashable {
        /// The manager's `RequestInterceptor`.
        case interceptor
        /// The manager's `RetryPolicy`, within its retry budget.
        case retryPolicy
    }

    /// The attempt that ended (from 1).
    public let attempt: Int
    /// Its outcome: a response head (a 503, say) or a transfer failure.
    public let outcome: Result<HTTPResponse, TransferError>
    /// Who asked for the retry.
    public let decidedBy: Decider

    /// Creates one; the manager makes these.
    public init(attempt: Int, outcome: Result<HTTPResponse, TransferError>, decidedBy: Decider) {
        self.attempt = attempt
        self.outcome = outcome
        self.decidedBy = decidedBy
    }
}
