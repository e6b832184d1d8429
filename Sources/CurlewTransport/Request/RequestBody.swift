import Foundation

/// The body a request sends.
public enum RequestBody: Sendable, Hashable {
    /// Bytes in memory.
    case data(Data)
    /// The contents of a file, streamed as curl asks for it (never loaded whole).
    case file(URL)
    /// Pieces sent one after the other, each from memory or from a region of a file (a
    /// `multipart/form-data` body is built this way). Files are read piece by piece as curl asks for
    /// bytes, never loaded whole; the total length is known before the first byte is sent.
    case parts([Part])
    /// Chunks produced while the body is sent, from an `AsyncSequence` (see ``RequestBodyStream``):
    /// chunked when the length is unknown, and never sent twice.
    case stream(RequestBodyStream)

    /// One piece of a ``RequestBody/parts(_:)`` body.
    public enum Part: Sendable, Hashable {
        /// Bytes in memory.
        case data(Data)
        /// A region of a file, read as curl asks for it.
        case file(FileRegion)

        /// The number of bytes this part sends.
        public var length: Int64 {
            switch self {
            case .data(let data): return Int64(data.count)
            case .file(let region): return region.length
            }
        }
    }

    /// A byte range of a file that a request body sends, and the size the file had when the range
    /// was chosen.
    ///
    /// When the transfer opens the file, its size must still be ``fileSize`` (when given); otherwise,
    /// or if the file ends before the region does while it is being read, the transfer fails with
    /// ``TransferError/Code/requestBodyFileChanged`` instead of sending a body shorter than the
    /// `Content-Length` it announced.
    public struct FileRegion: Sendable, Hashable {
        /// The file.
        public var url: URL
        /// The first byte to send.
        public var offset: Int64
        /// How many bytes to send from ``offset``.
        public var length: Int64
        /// The file's size when the region was chosen; `nil` only requires the file to hold the region.
        public var fileSize: Int64?

        /// A region of the file at `url`.
        ///
        /// - Parameters:
        ///   - url: A `file:` URL.
        ///   - offset: The first byte to send (at least 0).
        ///   - length: How many bytes to send (at least 0).
        ///   - fileSize: The size the file must have when it is sent, or `nil`.
        public init(url: URL, offset: Int64 = 0, length: Int64, fileSize: Int64? = nil) {
            self.url = url
            self.offset = offset
            self.length = length
            self.fileSize = fileSize
        }

        /// The whole file at `url` as it is now: its current size is both the length and the size
        /// it must still have when sent.
        ///
        /// - Throws: ``TransferError`` with ``TransferError/Code/cannotOpenFile`` when the file does
        ///   not exist or is not a regular file.
        public init(wholeFileAt url: URL) throws(TransferError) {
            var info = stat()
            guard stat(url.path, &info) == 0 else {
                throw TransferError(.cannotOpenFile, "Cannot read \(url.path): \(ResponseBodySink.lastError())")
            }
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                throw TransferError(.cannotOpenFile, "\(url.path) is not a regular file.")
            }
            self.init(url: url, offset: 0, length: Int64(info.st_size), fileSize: Int64(info.st_size))
        }
    }
}

/// Where a response body goes.
public enum ResponseDestination: Sendable, Hashable {
    /// Collected in memory, delivered as ``TransferResponse/body``.
    case memory
    /// Streamed to this file. The body is written to a temporary file beside it, which replaces the
    /// destination only when the transfer succeeds with a status in
    /// ``TransferOptions/fileReplacementStatusCodes``. Anything else — another status, a failure, a
    /// cancel, a full disk — leaves the destination as it was and no temporary file.
    case file(URL)
    /// Handed to a consumer as it arrives, with backpressure (see ``ResponseBodyStream``). Such a
    /// transfer ignores ``Transfer/pause()``: a consumer pauses it by not reading.
    case stream(ResponseBodyStream)

    /// How many bytes of the body of a response that does not replace a file destination (its
    /// status is not in ``TransferOptions/fileReplacementStatusCodes``) are kept in
    /// ``TransferResponse/body``: 64 KiB, enough for an error page or a problem document.
    public static let retainedErrorBodySize = 64 * 1024
}
