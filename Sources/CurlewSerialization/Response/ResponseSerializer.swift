import Foundation
import HTTPTypes

/// Turns a finished response into a typed value: AFNetworking's `AFURLResponseSerialization`,
/// with the result's type known to the compiler.
///
/// A serializer sees the final response head, the body (when it was collected in memory) and the
/// URL it came from. It returns its ``Output``, or throws to make the operation fail with that
/// error. Serializers know nothing of curl or of the transfer engine, so they are tested alone and
/// shared between operations.
///
/// `RequestOperation` calls ``serialize(response:body:url:requestMethod:)`` on one of its shared
/// processing queues, never on the network context, and only when the transfer itself succeeded;
/// so a serializer may take its time, but it runs on several threads at once for different
/// operations.
///
/// ```swift
/// struct LineCountSerializer: ResponseSerializer {
///     func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> Int {
///         guard response.status.kind == .successful else { throw MyError.status(response.status.code) }
///         return body.map { $0.split(separator: UInt8(ascii: "\n")).count } ?? 0
///     }
/// }
/// operation.responseSerializer = LineCountSerializer()
/// let lines = try await operation.responseValue(as: Int.self)
/// ```
///
/// Curlew's serializers validate status and content type first (``ValidatingResponseSerializer``)
/// and throw ``ResponseSerializationError``: ``HTTPResponseSerializer``, ``StringResponseSerializer``,
/// ``JSONResponseSerializer``, ``DecodableResponseSerializer``, ``PropertyListResponseSerializer``,
/// ``XMLResponseSerializer``; ``DataResponseSerializer`` passes the body through unchecked and
/// ``CompoundResponseSerializer`` tries several in turn.
public protocol ResponseSerializer<Output>: Sendable {
    /// What the serializer makes of a response.
    associatedtype Output: Sendable

    /// The value for a response, or an error that makes the operation fail.
    ///
    /// - Parameters:
    ///   - response: The final response head (after redirects). Any status arrives here: deciding
    ///     that a 404 is a failure is the serializer's job.
    ///   - body: The body when it was collected in memory; `nil` when it went to a file.
    ///   - url: The URL the response came from.
    /// - Returns: The value handed to the success handler (and kept as the operation's
    ///   `responseObject`).
    /// - Throws: Any error; the operation then fails with it.
    func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> Output

    /// The value for a response to a request made with `requestMethod`.
    ///
    /// A response to HEAD has no body whatever its `Content-Length` says; serializers that accept
    /// an empty body only then (``DecodableResponseSerializer``, ``JSONResponseSerializer``)
    /// implement this. `RequestOperation` calls this one, with its request's method. The default
    /// implementation ignores the method and calls ``serialize(response:body:url:)``, so a
    /// serializer that does not care implements only that.
    ///
    /// - Parameters:
    ///   - response: The final response head.
    ///   - body: The body when it was collected in memory.
    ///   - url: The URL the response came from.
    ///   - requestMethod: The method of the request the response answers, when known.
    /// - Returns: The value.
    /// - Throws: Any error; the operation then fails with it.
    func serialize(response: HTTPResponse, body: Data?, url: URL?, requestMethod: HTTPRequest.Method?) throws -> Output
}

extension ResponseSerializer {
    public func serialize(response: HTTPResponse, body: Data?, url: URL?, requestMethod: HTTPRequest.Method?) throws -> Output {
        try self.serialize(response: response, body: body, url: url)
    }
}
