/// The limits one response body is held to, and the check of each body chunk against them. A value
/// with no I/O: the transfer passes the counts in.
///
/// Which limits apply depends on where the body goes: a body collected in memory is held to
/// ``TransferOptions/maximumInMemoryBodySize``; any body, in memory or streamed to a file, to
/// ``TransferOptions/maximumResponseBodySize`` and ``TransferOptions/decompressionLimit``. The
/// smaller size limit wins.
struct ResponseBodyLimits: Hashable {
    /// A size limit, and whether it is the in-memory one.
    struct Maximum: Hashable {
        var bytes: Int64
        var inMemory: Bool
    }

    /// The most bytes the body may have.
    let maximum: Maximum?
    /// How far a decoded body may expand.
    let decompression: DecompressionLimit

    init(options: TransferOptions, destination: ResponseDestination) {
        let inMemory = destination == .memory
        var maximum: Maximum?
        if let limit = options.maximumResponseBodySize { maximum = Maximum(bytes: limit, inMemory: false) }
        if inMemory, let limit = options.maximumInMemoryBodySize, limit < (maximum?.bytes ?? .max) {
            maximum = Maximum(bytes: limit, inMemory: true)
        }
        self.maximum = maximum
        self.decompression = options.decompressionLimit
    }

    /// The failure a `Content-Length` of `length` already makes certain, if any.
    func checkAnnounced(length: Int64) -> TransferError? {
        guard let maximum = self.maximum, length > maximum.bytes else { return nil }
        return Self.tooLarge(maximum, announced: length)
    }

    /// The failure of a body that would hold `total` bytes after the next chunk, if any.
    ///
    /// - Parameters:
    ///   - total: The body's decoded length with the chunk.
    ///   - received: For a content-encoded body, the bytes received for it on the wire so far (curl
    ///     counts them before it decodes a read); `nil` when the body is not decoded.
    func check(total: Int64, received: Int64?) -> TransferError? {
        if let maximum = self.maximum, total > maximum.bytes {
            return Self.tooLarge(maximum, announced: nil)
        }
        if let received, self.decompression.isExceeded(decoded: total, received: received) {
            guard case .ratio(let ratio) = self.decompression else { return nil }
            return TransferError(.responseTooLarge,
                                 "The response body expanded more than \(ratio)-fold while it was decompressed "
                                 + "(\(received) bytes became over \(total)): a decompression bomb? "
                                 + "See TransferOptions.decompressionLimit.")
        }
        return nil
    }

    private static func tooLarge(_ maximum: Maximum, announced: Int64?) -> TransferError {
        let size = announced.map { "The response body (\($0) bytes announced)" } ?? "The response body"
        if maximum.inMemory {
            return TransferError(.responseTooLarge,
                                 "\(size) exceeds \(maximum.bytes) bytes, the limit for bodies collected in memory "
                                 + "(TransferOptions.maximumInMemoryBodySize): raise it, or stream the body to a file.")
        }
        return TransferError(.responseTooLarge, "\(size) exceeds \(maximum.bytes) bytes (TransferOptions.maximumResponseBodySize).")
    }
}
