import Foundation
import HTTPTypes

/// Tries several serializers in order and returns the value of the first that accepts the
/// response: AFNetworking's `AFCompoundResponseSerializer`.
///
/// ```swift
/// operation.responseSerializer = CompoundResponseSerializer([JSONResponseSerializer(), XMLResponseSerializer()])
/// switch operation.responseObject {
/// case let json as JSONValue: …
/// case let xml as XMLElementNode: …
/// default: …
/// }
/// ```
///
/// The serializers may have different outputs, so the output is `any Sendable`. When every one
/// throws, the first one's error is thrown (usually the most specific); an empty compound
/// validates and returns the body as ``HTTPResponseSerializer`` does, as AFNetworking falls back to
/// its base serializer.
public struct CompoundResponseSerializer: ResponseSerializer {
    /// The serializers, in the order they are tried.
    public var serializers: [any ResponseSerializer]

    /// Creates a compound of `serializers`.
    public init(_ serializers: [any ResponseSerializer]) {
        self.serializers = serializers
    }

    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> any Sendable {
        try self.serialize(response: response, body: body, url: url, requestMethod: nil)
    }

    /// The first accepted value.
    ///
    /// - Throws: The first serializer's error when none accepts the response.
    public func serialize(response: HTTPResponse, body: Data?, url: URL?, requestMethod: HTTPRequest.Method?) throws -> any Sendable {
        var firstError: (any Error)?
        for serializer in self.serializers {
            do {
                return try serializer.serialize(response: response, body: body, url: url, requestMethod: requestMethod)
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
        return try HTTPResponseSerializer().serialize(response: response, body: body, url: url)
    }
}
