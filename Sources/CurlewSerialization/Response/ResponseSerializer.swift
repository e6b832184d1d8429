import Foundation
import HTTPTypes

/// Turns a finished response into the value an operation hands to its success handler.
///
/// A serializer sees the final response head, the body (when it was collected in memory) and the
/// URL it came from. It returns any `Sendable` value, or throws to make the operation fail with that
/// error. Serializers know nothing of curl or of the transfer engine, so they can be tested alone
/// and shared between operations.
///
/// `RequestOperation` calls ``serialize(response:body:url:)`` on one of its shared processing
/// queues, never on the network context, and only when the transfer itself succeeded; so a
/// serializer may take its time, but it runs on several threads at once for different
/// operations.
///
/// ```swift
/// struct LineCountSerializer: ResponseSerializer {
///     func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> (any Sendable)? {
///         guard response.status.kind == .successful else { throw MyError.status(response.status.code) }
///         return body.map { $0.split(separator: UInt8(ascii: "\n")).count }
///     }
/// }
/// operation.responseSerializer = LineCountSerializer()
/// ```
public protocol ResponseSerializer: Sendable {
    /// The value for a response, or an error that makes the operation fail.
    ///
    /// - Parameters:
    ///   - response: The final response head (after redirects). Any status arrives here: deciding
    ///     that a 404 is a failure is the serializer's job.
    ///   - body: The body when it was collected in memory; `nil` when it went to a file.
    ///   - url: The URL the response came from.
    /// - Returns: The value handed to the success handler (and kept as the operation's
    ///   `responseObject`); `nil` is a valid success.
    /// - Throws: Any error; the operation then fails with it.
    func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> (any Sendable)?
}
