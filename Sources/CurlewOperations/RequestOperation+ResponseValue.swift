import CurlewSerialization
import CurlewTransport
import Foundation

extension RequestOperation {
    /// Waits for the operation to finish and returns its response value as `type`: the typed
    /// counterpart of ``responseObject()``.
    ///
    /// ```swift
    /// let operation = RequestOperation(request: request, engine: engine)
    /// operation.responseSerializer = DecodableResponseSerializer<User>()
    /// queue.addOperation(operation)
    /// let user = try await operation.responseValue(as: User.self)
    /// ```
    ///
    /// `type` is the ``responseSerializer``'s `Output` (`JSONValue` for a
    /// `JSONResponseSerializer`, `Data?` for the default `DataResponseSerializer`). Like
    /// ``responseObject()`` this starts nothing and cancels the operation if the awaiting task is
    /// cancelled.
    ///
    /// - Parameter type: The type of value expected.
    /// - Returns: The serialized response.
    /// - Throws: The transfer's `TransferError`, the serializer's error (Curlew's serializers
    ///   throw `ResponseSerializationError`), or ``ResponseValueTypeMismatch`` when the value is of
    ///   another type.
    public func responseValue<Output: Sendable>(as type: Output.Type = Output.self) async throws -> Output {
        let object = try await self.responseObject()
        if let value = object as? Output { return value }
        throw ResponseValueTypeMismatch(expected: "\(Output.self)", actual: object.map { "\(Swift.type(of: $0))" } ?? "nil")
    }
}

/// ``RequestOperation/responseValue(as:)`` was asked for a type its serializer does not make.
public struct ResponseValueTypeMismatch: Error, Sendable, Hashable, CustomStringConvertible {
    /// The type asked for.
    public var expected: String
    /// The type of the operation's response object (`"nil"` when it has none).
    public var actual: String

    /// Names both types and where to look: the operation's `responseSerializer`.
    public var description: String {
        "The response value is a \(self.actual), not a \(self.expected): check the operation's responseSerializer."
    }
}

/// A serializer's value as a `responseObject`: an `Optional` output that is `nil` becomes `nil`,
/// rather than a boxed empty optional that is not `== nil`, and one that is not becomes its value.
///
/// A dynamic cast to `(any Sendable)?` does both: the runtime unwraps an `Optional` in the box
/// (`nil` stays `nil`) and wraps anything else. `Sendable` is a marker protocol, so the cast looks
/// up no conformance, where asking whether the value conforms to a protocol of Curlew's own would
/// search the conformance tables for every response.
func flattened(_ value: any Sendable) -> (any Sendable)? {
    dynamicCast(value, to: (any Sendable)?.self) ?? nil
}

/// `value as? Target`, where the compiler cannot tell the cast always succeeds (it does not: it
/// may unwrap).
private func dynamicCast<Value, Target>(_ value: Value, to target: Target.Type) -> Target? {
    value as? Target
}
