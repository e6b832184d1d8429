import Foundation
import HTTPTypes

/// Why a response was not turned into a value: the one error Curlew's response serializers throw.
///
/// It carries the response head, the body bytes and the URL, so a failure handler can log or
/// inspect what the server said; ``description`` shows at most ``descriptionBodyLimit`` bytes of
/// the body. When the status code alone was unacceptable and the body still parsed, the parsed
/// value is in ``parsedBody`` (AFNetworking's JSON serializer likewise still parses the error
/// body, so an API's error document is reachable).
///
/// ```swift
/// do {
///     let user = try await operation.responseValue(as: User.self)
/// } catch let error as ResponseSerializationError {
///     switch error.reason {
///     case .unacceptableStatusCode(404): showNotFound()
///     case .unacceptableStatusCode: let problem = try? error.decodeBody(as: Problem.self)
///     default: log(error)   // prints the status, the URL and the start of the body
///     }
/// }
/// ```
public struct ResponseSerializationError: Error, Sendable, CustomStringConvertible {
    /// What was wrong with the response.
    public enum Reason: Sendable {
        /// The status code is not in the serializer's `acceptableStatusCodes`.
        case unacceptableStatusCode(Int)
        /// The media type (`nil`: no `Content-Type`) is not in the serializer's `acceptableContentTypes`.
        case unacceptableContentType(String?)
        /// The body is empty (or was not collected in memory) and the serializer needs one.
        case emptyBody
        /// Arrays, dictionaries or elements nest deeper than the serializer's limit.
        case nestingTooDeep(limit: Int)
        /// The body describes more values than the serializer's limit: JSON values, XML elements,
        /// attributes and runs of text, property-list objects (counted once per reference, since a
        /// shared object becomes one copy per reference once decoded).
        case tooManyNodes(limit: Int)
        /// The decoded strings and data would take more bytes than the serializer's limit (a
        /// binary property list can reference one long string many times).
        case tooLarge(limit: Int)
        /// An XML element has more attributes than the serializer's limit.
        case tooManyAttributes(limit: Int)
        /// The body could not be decoded. `codingPath` says where, when the decoder knows
        /// (`["items", "3", "name"]`).
        case decodingFailed(underlying: any Error, codingPath: [String])
    }

    /// How many body bytes ``description`` shows.
    public static let descriptionBodyLimit = 512

    /// What was wrong.
    public var reason: Reason
    /// The response head.
    public var response: HTTPResponse
    /// The body, as received (`nil` when it went to a file).
    public var body: Data?
    /// The URL the response came from.
    public var url: URL?
    /// For an unacceptable status whose body the serializer could still parse, the parsed value
    /// (the serializer's `Output`); otherwise `nil`.
    public var parsedBody: (any Sendable)?

    /// Creates an error; Curlew's serializers make these, custom ones and tests may too.
    public init(_ reason: Reason, response: HTTPResponse, body: Data?, url: URL?, parsedBody: (any Sendable)? = nil) {
        self.reason = reason
        self.response = response
        self.body = body
        self.url = url
        self.parsedBody = parsedBody
    }

    /// Decodes the body as `type`, e.g. an API's error document.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - decoder: The decoder; a `JSONDecoder` by default.
    /// - Returns: The decoded value.
    /// - Throws: The decoder's error; ``Reason/emptyBody`` when there is no body.
    public func decodeBody<T: Decodable>(as type: T.Type, decoder: some DataDecoder = JSONDecoder()) throws -> T {
        guard let body, !body.isEmpty else {
            throw ResponseSerializationError(.emptyBody, response: self.response, body: self.body, url: self.url)
        }
        return try decoder.decode(type, from: body)
    }

    /// The reason, the status and URL, and the start of the body as text, for logs and test failures.
    public var description: String {
        var text = "ResponseSerializationError."
        switch self.reason {
        case .unacceptableStatusCode(let code):
            text += "unacceptableStatusCode(\(code))"
        case .unacceptableContentType(let type):
            text += "unacceptableContentType(\(type ?? "none"))"
        case .emptyBody:
            text += "emptyBody"
        case .nestingTooDeep(let limit):
            text += "nestingTooDeep(limit: \(limit))"
        case .tooManyNodes(let limit):
            text += "tooManyNodes(limit: \(limit))"
        case .tooLarge(let limit):
            text += "tooLarge(limit: \(limit) bytes)"
        case .tooManyAttributes(let limit):
            text += "tooManyAttributes(limit: \(limit))"
        case .decodingFailed(let underlying, let codingPath):
            text += "decodingFailed"
            if !codingPath.isEmpty { text += " at \(codingPath.joined(separator: "."))" }
            text += ": \(underlying)"
        }
        text += " — HTTP \(self.response.status.code)"
        if let url { text += " \(url.absoluteString)" }
        if let body {
            let shown = body.prefix(Self.descriptionBodyLimit)
            text += ", \(body.count) body bytes"
            if !shown.isEmpty {
                text += ": \"\(String(decoding: shown, as: UTF8.self))\""
                if body.count > shown.count { text += "…" }
            }
        }
        return text
    }
}
