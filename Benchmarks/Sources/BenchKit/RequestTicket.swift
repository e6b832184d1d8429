/// One admitted request of a ``ClosedLoop``: when it started, and where its end is reported.
///
/// A client starts the request the moment it gets a ticket, and calls ``finish(_:)`` exactly once
/// when it ends, from whatever thread it learns of that (its own context: the engine's queue or
/// thread, a delegate queue, an event loop). ``finish(_:)`` returns the ticket for the next request
/// while the loop wants more: the client starts it right there, so refilling happens on the
/// client's own context, as an application would.
public struct RequestTicket: Sendable {
    let loop: ClosedLoop
    /// `MonotonicClock` nanoseconds when the request was admitted (its latency starts here).
    public let startNanoseconds: UInt64

    init(loop: ClosedLoop, startNanoseconds: UInt64) {
        self.loop = loop
        self.startNanoseconds = startNanoseconds
    }

    /// Reports the request's end; returns the next request's ticket, or `nil` when the loop is not
    /// refilling any more (the measured phase is over).
    @discardableResult
    public func finish(_ outcome: RequestOutcome) -> RequestTicket? {
        self.loop.finish(self, outcome)
    }
}
