import Foundation

/// Why a request could not be serialized; nothing was sent.
///
/// Request serializers throw this, not `TransferError`: the request never reached the transfer
/// engine (as AFNetworking keeps its own error domain, `com.alamofire.error.serialization.request`,
/// for the same reason). The engine still refuses, with `TransferError/Code/invalidRequest`,
/// what it is handed directly.
///
/// ```swift
/// do {
///     request = try serializer.request(method: .post, url: url, parameters: ["ratio": .double(.nan)])
/// } catch let error as RequestSerializationError where error.code == .invalidParameters {
///     print(error.codingPath, error.message)   // ["ratio"] Unable to encode Double.nan directly in JSON.
/// }
/// ```
public struct RequestSerializationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A header name is not an HTTP token (RFC 9110), or is empty.
        case invalidHeaderName
        /// A header value contains CR, LF, NUL or another character a field value cannot hold
        /// (RFC 9110), or starts or ends with whitespace; or a user name for Basic authentication
        /// contains a colon.
        case invalidHeaderValue
        /// The parameters cannot be encoded: a non-finite number, nesting deeper than
        /// ``ParameterValue/maximumDepth``, a value the format cannot hold (null in a property list),
        /// parameters that are not keyed where a form or query needs names, or an `Encodable` that
        /// threw.
        case invalidParameters
        /// The method cannot carry the body (a multipart form with GET or HEAD).
        case invalidMethod
        /// A multipart form's boundary or part is invalid: a boundary that is not 1–70 allowed
        /// characters, or a MIME type that is not a valid header value.
        case invalidMultipartForm
        /// A file to upload does not exist, is not a regular file, or cannot be read.
        case cannotReadFile
    }

    /// What was wrong.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// Where in the parameters encoding failed (keys and indices), when it did.
    public var codingPath: [String]

    /// Creates an error; Curlew makes these, tests and custom serializers may too.
    public init(_ code: Code, _ message: String, codingPath: [String] = []) {
        self.code = code
        self.message = message
        self.codingPath = codingPath
    }

    /// An ``Code/invalidParameters`` error for what an encoder threw.
    init(encoding error: any Error) {
        if let error = error as? RequestSerializationError {
            self = error
        } else if case EncodingError.invalidValue(_, let context) = error {
            // Property-list encoding wraps the real failure, with its path, in a top-level one.
            if context.codingPath.isEmpty, let underlying = context.underlyingError, underlying is EncodingError {
                self.init(encoding: underlying)
                return
            }
            self.init(.invalidParameters, context.debugDescription, codingPath: context.codingPath.map(\.stringValue))
        } else {
            self.init(.invalidParameters, "The parameters could not be encoded: \(error)")
        }
    }

    /// The code, the coding path when there is one, and the message:
    /// `RequestSerializationError.<code> at <path>: <message>`.
    public var description: String {
        let path = self.codingPath.isEmpty ? "" : " at \(self.codingPath.joined(separator: "."))"
        return "RequestSerializationError.\(self.code.rawValue)\(path): \(self.message)"
    }
}
