/// How far a compressed response body may expand while curl decodes it, into memory or into a file.
///
/// A small hostile body can inflate enormously: 1 MB of gzip makes 1 GiB of zeros, and a
/// doubly gzipped body (`Content-Encoding: gzip, gzip`) of a few kilobytes does the same. Collected
/// in memory, such a body takes the process with it; streamed to a file, it fills the disk. With a
/// ratio limit the transfer fails with
/// ``TransferError/Code/responseTooLarge`` as soon as the decoded body is more than `ratio` times the
/// bytes received for it (curl's count of body bytes on the wire, `CURLINFO_SIZE_DOWNLOAD_T`), once
/// it is past a small allowance (``allowance``) that spares tiny bodies whose ratio says nothing.
///
/// The default, `.ratio(100)`, is four times AsyncHTTPClient's suggested `.ratio(25)`: text and JSON
/// compress 3–20 times, so a legitimate body stays far below it (a false positive costs a failed
/// request), while a bomb stops after about 100 times one read of curl's (16 KiB, 1.6 MB decoded; a
/// streamed body reads up to 256 KiB at once, and its buffer pauses the transfer anyway); gzip's own
/// ceiling is about 1,032:1.
///
/// ```swift
/// var options = TransferOptions()
/// options.decompressionLimit = .ratio(25)   // stricter
/// options.decompressionLimit = .none        // trust the server
/// ```
public enum DecompressionLimit: Sendable, Hashable {
    /// No limit on expansion (other limits still apply).
    case none
    /// The decoded body may be at most this many times the bytes received for it.
    case ratio(Int)

    /// Decoded bytes that are always allowed, whatever the ratio (1 MiB).
    public static let allowance: Int64 = 1 << 20

    /// Whether `decoded` bytes made of `received` bytes on the wire exceed the limit.
    func isExceeded(decoded: Int64, received: Int64) -> Bool {
        guard case .ratio(let ratio) = self, decoded > Self.allowance else { return false }
        let (bound, overflow) = max(received, 0).multipliedReportingOverflow(by: Int64(max(ratio, 1)))
        return !overflow && decoded > bound
    }
}
