import Foundation
import HTTPTypes

/// The pass-through serializer: the response object is the body's `Data`, whatever the status.
///
/// The default of every `RequestOperation`. It never throws, so every completed transfer (a 404
/// included) reaches the success handler with its bytes. Use ``HTTPResponseSerializer`` for the
/// same bytes with status and content-type validation.
///
/// ```swift
/// operation.setCompletionHandlers(success: { _, object in
///     let data = object as? Data   // the body; nil when it went to a file
/// }, failure: nil)
/// ```
public struct DataResponseSerializer: ResponseSerializer, Hashable {
    /// Creates the serializer.
    public init() {}

    /// Returns `body` unchanged: a `Data`, or `nil` when the body went to a file.
    ///
    /// - Parameters:
    ///   - response: Ignored.
    ///   - body: The body collected in memory.
    ///   - url: Ignored.
    public func serialize(response: HTTPResponse, body: Data?, url: URL?) -> Data? {
        body
    }
}
