/// The bytes ``Route/events(key:count:dropAfter:retryMilliseconds:)`` sends, and what each request of
/// it gets: a value with no I/O.
///
/// A response is the ``preamble(retryMilliseconds:)`` followed by events ``event(_:)`` in order:
///
/// ```
/// : curlew
/// retry: 500
///
/// id: 1
/// event: tick
/// data: 1
/// data: second line
///
/// id: 2
/// …
/// ```
public enum EventStream {
    /// What one request gets.
    public enum Plan: Sendable, Hashable {
        /// 204 No Content: nothing is left to send, so an event source stops reconnecting.
        case noContent
        /// The events `first...last`; then the response ends normally, or (`endsNormally` false)
        /// the connection or stream is cut.
        case events(first: Int, last: Int, endsNormally: Bool)
    }

    /// The response's start: the comment line `: curlew`, with `retryMilliseconds` a `retry:` line,
    /// then a blank line.
    public static func preamble(retryMilliseconds: Int?) -> String {
        ": curlew\n" + (retryMilliseconds.map { "retry: \($0)\n" } ?? "") + "\n"
    }

    /// Event `id`, exactly as sent: its `id`, the event type `tick`, and two data lines (the id,
    /// then `second line`), ended by a blank line.
    public static func event(_ id: Int) -> String {
        "id: \(id)\nevent: tick\ndata: \(id)\ndata: second line\n\n"
    }

    /// What a request gets.
    ///
    /// - Parameters:
    ///   - count: The events the key has (ids 1 to `count`).
    ///   - dropAfter: At most this many events per connection, or no limit.
    ///   - lastEventID: The request's `Last-Event-ID`; one that is not a decimal number counts as absent.
    ///   - lastEventSent: Whether an earlier request of the key already got event `count`.
    public static func plan(count: Int, dropAfter: Int?, lastEventID: String?, lastEventSent: Bool) -> Plan {
        let after = lastEventID.flatMap { RangeDecision.parseDigits(Substring($0)) } ?? 0
        guard !lastEventSent, after < count else { return .noContent }
        let first = after + 1
        guard let dropAfter, count - after > dropAfter else {
            return .events(first: first, last: count, endsNormally: true)
        }
        return .events(first: first, last: after + max(1, dropAfter), endsNormally: false)
    }
}
