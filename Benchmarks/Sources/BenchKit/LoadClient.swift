/// One HTTP client under test, driven by a ``ClosedLoop``.
///
/// The harness admits `concurrency` tickets and hands each to ``start(_:)``; from then on the client
/// refills itself: when a request ends it calls ``RequestTicket/finish(_:)`` and starts the ticket
/// it gets back, if any. So exactly `concurrency` requests are in flight until the measured phase
/// ends, and each completion starts the next request on the client's own context.
public protocol LoadClient: AnyObject, Sendable {
    /// Starts one request now (any thread; must not block). Its end is reported with
    /// `ticket.finish(_:)`, exactly once, from any thread.
    func start(_ ticket: RequestTicket)

    /// Releases the client (cancelling what is still in flight), then calls `completion` from any
    /// thread. The main run loop keeps running meanwhile.
    func shutdown(_ completion: @escaping @Sendable () -> Void)

    /// A remark for the result (how the client is configured, a caveat); `nil` for none.
    var note: String? { get }
}

extension LoadClient {
    /// No remark.
    public var note: String? { nil }
}

/// Why a client could not be made for the given options.
public enum ClientSetupError: Error, Sendable {
    /// The client cannot run this scenario: the harness prints a result with `requests: 0` and this
    /// note, and exits 0.
    case unsupported(note: String)
    /// A setup failure (a malformed URL, a missing CA file): stderr and a non-zero exit, no result.
    case failed(String)
}

extension ClientSetupError {
    /// What every client but Curlew's operation clients answers to the `batch` scenario.
    public static let batchNotSupported = ClientSetupError.unsupported(
        note: "the batch scenario measures Curlew's operations queued in waves, with and without OperationBatch")

    /// What the rejected designs answer to the `stream` scenario.
    public static let streamNotMeasured = ClientSetupError.unsupported(
        note: "the rejected designs are measured on small GETs; streaming is measured on Curlew's engine and manager")
}
