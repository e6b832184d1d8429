/// How an HTTP cache answered a request (``TransferMetrics/cacheOutcome``).
public enum CacheOutcome: String, Sendable, Hashable {
    /// The cache had nothing it could use: the response came from the server (and may now be stored).
    case miss
    /// A fresh stored response answered; nothing was sent, so the other metrics are zero.
    case hit
    /// A stored response was confirmed by the server (a conditional request answered 304) and
    /// answered, with its header fields updated.
    case revalidated
}
