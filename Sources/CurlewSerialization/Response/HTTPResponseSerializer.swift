import Foundation
import HTTPTypes

/// Validates the status code and content type and returns the body's bytes: AFNetworking's
/// `AFHTTPResponseSerializer`.
///
/// ```swift
/// operation.responseSerializer = HTTPResponseSerializer()   // a 404 now reaches the failure handler
/// let data = try await operation.responseValue(as: Data?.self)
/// ```
///
/// See ``ValidatingResponseSerializer`` for the rules.
public struct HTTPResponseSerializer: ValidatingResponseSerializer, Hashable {
    public var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
    /// `nil`: any content type.
    public var acceptableContentTypes: Set<String>?

    /// Creates the serializer: 2xx, any content type.
    public init() {}

    /// Returns `body` (`nil` when it went to a file) once the response is valid.
    ///
    /// - Throws: ``ResponseSerializationError`` when the status or content type is unacceptable.
    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> Data? {
        try self.validatedValue(response: response, body: body, url: url) { body }
    }
}
