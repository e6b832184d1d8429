import Foundation
import CurlewTransport
import HTTPTypes

extension ResponseSerializationError: CurlewError {
    /// The response's status code.
    public var statusCode: Int? { self.response.status.code }
    /// The response head.
    public var responseHead: HTTPResponse? { self.response }
    /// The body as received.
    public var responseBody: Data? { self.body }
    /// The URL the response came from.
    public var requestURL: URL? { self.url }
    /// The decoder's error for ``Reason/decodingFailed(underlying:codingPath:)``; otherwise `nil`.
    public var underlyingError: (any Error)? {
        if case .decodingFailed(let underlying, _) = self.reason { return underlying }
        return nil
    }

    /// What was refused and why, with the status, in a sentence: "The server answered 404 Not Found
    /// for https://…", "The response from https://… could not be decoded at items.3.name: …".
    public var errorDescription: String? {
        let status = "\(self.response.status.code) \(self.response.status.reasonPhrase)"
            .trimmingCharacters(in: .whitespaces)
        let from = self.url.map { " from \($0.absoluteString)" } ?? ""
        switch self.reason {
        case .unacceptableStatusCode:
            return "The server answered \(status)\(self.url.map { " for \($0.absoluteString)" } ?? "")."
        case .unacceptableContentType(let type):
            return "The response\(from) has content type \(type ?? "none"), which the serializer does not accept (HTTP \(status))."
        case .emptyBody:
            return "The response\(from) has no body, and one was expected (HTTP \(status))."
        case .decodingFailed(let underlying, let codingPath):
            let path = codingPath.isEmpty ? "" : " at \(codingPath.joined(separator: "."))"
            return "The response\(from) could not be decoded\(path): \(underlying)"
        default:
            return self.description
        }
    }
}
