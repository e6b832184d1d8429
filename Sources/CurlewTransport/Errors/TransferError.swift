import Foundation

/// Why a transfer failed: a code every caller can switch over, plus what curl said.
///
/// Codes follow Foundation's `URLError` codes, so people arriving from URLSession, AFNetworking or
/// Alamofire find familiar names; ``urlError`` bridges to a real `URLError`. curl's own result code
/// and message are kept for diagnosis.
///
/// ```swift
/// do {
///     let response = try await engine.execute(request)
/// } catch let error as TransferError where error.code == .timedOut {
///     // retry later
/// }
/// ```
public struct TransferError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in words an HTTP client user recognises.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The transfer was cancelled (``Transfer/cancel()``), or its engine shut down.
        case cancelled
        /// The connect, total or idle timeout expired.
        case timedOut
        /// The host refused the connection or could not be reached.
        case cannotConnectToHost
        /// The host name could not be resolved.
        case cannotFindHost
        /// The connection broke: reset by the peer, or closed before the body was complete.
        case networkConnectionLost
        /// The server's reply was not valid HTTP, or it sent nothing.
        case badServerResponse
        /// The TLS handshake failed.
        case secureConnectionFailed
        /// The server's certificate did not verify against the trusted roots or the host name.
        case serverCertificateUntrusted
        /// The URL's scheme is not `http` or `https` (also when a redirect points elsewhere).
        case unsupportedURL
        /// The URL is malformed: no host, spaces or control characters, unparsable.
        case badURL
        /// The request is invalid: a header with CR, LF or NUL, an invalid header name or method.
        case invalidRequest
        /// Redirects went on past the policy's maximum (also a redirect loop).
        case tooManyRedirects
        /// The response body is larger than ``TransferOptions/maximumResponseBodySize``.
        case responseTooLarge
        /// The response head (status line and headers) is larger than ``TransferOptions/maximumResponseHeadSize``.
        case responseHeadTooLarge
        /// The response body could not be decoded (`Content-Encoding`).
        case cannotDecodeContentData
        /// The request body file could not be opened or read.
        case cannotOpenFile
        /// The response body could not be written to its destination file.
        case cannotWriteToFile
        /// The request body could not be sent again when curl needed to rewind it (a streamed body is
        /// sent once: a redirect or retry that needs it again fails with this), or its stream failed.
        case requestBodyStreamExhausted
        /// A file the request body streams from changed size after the body was made (its
        /// `Content-Length` was already announced), or ended early while it was read; or a
        /// ``RequestBodyStream`` of announced length yielded fewer or more bytes.
        case requestBodyFileChanged
        /// Anything else; see ``TransferError/curlCode`` and ``TransferError/message``.
        case unknown

        /// The nearest `URLError.Code`.
        public var urlErrorCode: URLError.Code {
            switch self {
            case .cancelled: return .cancelled
            case .timedOut: return .timedOut
            case .cannotConnectToHost: return .cannotConnectToHost
            case .cannotFindHost: return .cannotFindHost
            case .networkConnectionLost: return .networkConnectionLost
            case .badServerResponse, .responseHeadTooLarge: return .badServerResponse
            case .secureConnectionFailed: return .secureConnectionFailed
            case .serverCertificateUntrusted: return .serverCertificateUntrusted
            case .unsupportedURL: return .unsupportedURL
            case .badURL, .invalidRequest: return .badURL
            case .tooManyRedirects: return .httpTooManyRedirects
            case .responseTooLarge: return .dataLengthExceedsMaximum
            case .cannotDecodeContentData: return .cannotDecodeContentData
            case .cannotOpenFile, .requestBodyFileChanged: return .cannotOpenFile
            case .cannotWriteToFile: return .cannotWriteToFile
            case .requestBodyStreamExhausted: return .requestBodyStreamExhausted
            case .unknown: return .unknown
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation: curl's error buffer when it wrote one, else Curlew's own.
    public var message: String
    /// curl's `CURLcode`, when the failure came from curl.
    public var curlCode: Int?
    /// The operating system's `errno` that curl recorded (`CURLINFO_OS_ERRNO`), when nonzero.
    public var osErrno: Int32?
    /// The URL of the request that failed (after redirects, the one being fetched when it failed).
    public var failingURL: URL?
    /// Whether any of the response (its status line) had arrived when the attempt failed. A
    /// connection reset or closed *before* that is safe to retry for an idempotent request (see
    /// ``RetryPolicy``); one that broke afterwards may have been processed by the server.
    public var responseStarted: Bool = false

    /// Creates an error; Curlew makes these, tests and adapters may too.
    public init(_ code: Code, _ message: String, curlCode: Int? = nil, osErrno: Int32? = nil, failingURL: URL? = nil) {
        self.code = code
        self.message = message
        self.curlCode = curlCode
        self.osErrno = osErrno
        self.failingURL = failingURL
    }

    /// The same failure as a Foundation `URLError`, with the failing URL and message in `userInfo`.
    public var urlError: URLError {
        var userInfo: [String: Any] = [NSLocalizedDescriptionKey: self.message]
        if let failingURL {
            userInfo[NSURLErrorFailingURLErrorKey] = failingURL
        }
        return URLError(self.code.urlErrorCode, userInfo: userInfo)
    }

    /// The code and the message, then curl's code and the failing URL when there are any:
    /// `TransferError.<code>: <message> (curl <n>) [<URL>]`.
    public var description: String {
        var text = "TransferError.\(self.code.rawValue): \(self.message)"
        if let curlCode { text += " (curl \(curlCode))" }
        if let failingURL { text += " [\(failingURL.absoluteString)]" }
        return text
    }
}

extension TransferError {
    /// A cancellation error for `url`, as AFNetworking's `cancelConnection` makes it.
    public static func cancelled(url: URL?) -> TransferError {
        TransferError(.cancelled, "The transfer was cancelled.", failingURL: url)
    }
}
