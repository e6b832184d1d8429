/// What a ``TestServer`` did for the ``Route/firehose(key:bytes:)`` requests of one key, read with
/// ``TestServer/firehose(_:)``.
///
/// A test that stops reading a firehose sees here that the server stopped too: ``becameUnwritable``
/// moves once the connection takes no more, and ``written`` then stays below what the client's and
/// the server's socket buffers hold, plus what the client keeps in memory.
public struct FirehoseRecord: Sendable, Hashable {
    /// Body bytes handed to the kernel (counted when each write completes; over TLS, the plaintext
    /// bytes of records written).
    public var written = 0
    /// How many times the connection (or HTTP/2 stream) became unwritable while the body was being
    /// written: the server had more than its high-water mark queued, because the client took nothing.
    public var becameUnwritable = 0

    /// Creates a record (the server makes them; public for tests that build expectations).
    public init(written: Int = 0, becameUnwritable: Int = 0) {
        self.written = written
        self.becameUnwritable = becameUnwritable
    }
}
