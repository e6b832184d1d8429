import Foundation
import CurlewTransport
import HTTPTypes

extension RequestSerializationError: CurlewError {
    /// `nil`: nothing was sent.
    public var statusCode: Int? { nil }
    /// `nil`.
    public var responseHead: HTTPResponse? { nil }
    /// `nil`.
    public var responseBody: Data? { nil }
    /// `nil`: the request was not built.
    public var requestURL: URL? { nil }
    /// `nil`.
    public var underlyingError: (any Error)? { nil }

    /// "The request could not be built: <message> (at <path>)."
    public var errorDescription: String? {
        let path = self.codingPath.isEmpty ? "" : " (at \(self.codingPath.joined(separator: ".")))"
        return "The request could not be built: \(self.message)\(path)"
    }
}
