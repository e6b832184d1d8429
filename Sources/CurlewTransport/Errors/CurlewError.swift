import Foundation
import HTTPTypes

/// What every error Curlew throws can tell: the one type to catch at the manager.
///
/// `TransferError` (the transfer failed or was cancelled), `RequestSerializationError` (the request
/// could not be built; nothing was sent) and `ResponseSerializationError` (the response was refused)
/// conform; switch on those for the details only one of them has. `localizedDescription` is a
/// sentence a person can act on.
///
/// ```swift
/// do {
///     let user = try await api.get("users/1", as: User.self)
/// } catch let error as CurlewError {
///     print(error.statusCode ?? 0, error.localizedDescription)   // 404 The server answered 404 Not Found for …
/// }
/// ```
public protocol CurlewError: LocalizedError, CustomStringConvertible, Sendable {
    /// The response's status code, when a response arrived.
    var statusCode: Int? { get }
    /// The response head, when a response arrived.
    var responseHead: HTTPResponse? { get }
    /// The response body (or, for a download, its first bytes), when there is one.
    var responseBody: Data? { get }
    /// The URL of the request that failed, when known.
    var requestURL: URL? { get }
    /// The error that caused this one (a `DecodingError`, say), when there is one.
    var underlyingError: (any Error)? { get }
}

extension TransferError: CurlewError {
    /// `nil`: a transfer error has no response (an HTTP error status is not a transfer failure).
    public var statusCode: Int? { nil }
    /// `nil`.
    public var responseHead: HTTPResponse? { nil }
    /// `nil`.
    public var responseBody: Data? { nil }
    /// ``failingURL``.
    public var requestURL: URL? { self.failingURL }
    /// `nil`: ``curlCode`` and ``osErrno`` carry curl's and the system's codes.
    public var underlyingError: (any Error)? { nil }

    /// The message and the URL: "Could not connect to server (…) [https://…]".
    public var errorDescription: String? {
        var text = self.message.isEmpty ? "The transfer failed (\(self.code.rawValue))." : self.message
        if let failingURL { text += " [\(failingURL.absoluteString)]" }
        return text
    }
}
