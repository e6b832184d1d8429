import CurlewOperations
import CurlewTransport
import Foundation

/// A request in flight that can be both controlled and awaited: pause it, resume it, cancel it,
/// and `await` its typed value.
///
/// ```swift
/// let task = api.dataTask(.get, "exports/big.csv", as: Data.self)
/// task.pause()                       // releases the connection, keeps the body so far
/// task.resume()                      // continues with a Range request when the server allows it
/// let data = try await task.value    // cancelling the awaiting task cancels the request
/// ```
///
/// The request is enqueued on the manager's operation queue when the task is made; `value` may be
/// awaited any number of times, from any number of tasks, before or after it finishes.
public final class RequestTask<Value: Sendable>: Sendable {
    /// The operation that runs the request; `nil` when the request could not even be built (then
    /// ``value`` throws why).
    public let operation: RequestOperation?
    /// Why the request could not be built.
    private let buildError: (any Error)?

    init(operation: RequestOperation) {
        self.operation = operation
        self.buildError = nil
    }

    init(failure: any Error) {
        self.operation = nil
        self.buildError = failure
    }

    /// The typed response value, once the request has finished.
    ///
    /// If the awaiting task is cancelled first, the request is cancelled (its transfer too, at
    /// once) and this throws the cancellation error.
    ///
    /// - Throws: `RequestSerializationError` or `TransferError/Code/badURL` when the request could
    ///   not be built; `TransferError` when the transfer failed or was cancelled;
    ///   `ResponseSerializationError` when the response was refused (status, content type, body).
    public var value: Value {
        get async throws {
            guard let operation = self.operation else {
                throw self.buildError ?? TransferError(.unknown, "The request was never made.")
            }
            return try await operation.responseValue(as: Value.self)
        }
    }

    /// The value and the response it came from (status, headers, timings in `metrics`).
    ///
    /// - Throws: As ``value``.
    public var valueAndResponse: (Value, TransferResponse) {
        get async throws {
            let value = try await self.value
            guard let response = self.operation?.response else {
                throw TransferError(.badServerResponse, "The request finished without a response.",
                                    failingURL: self.operation?.request.url)
            }
            return (value, response)
        }
    }

    /// The response, once the transfer has completed (any status); `nil` before.
    public var response: TransferResponse? {
        self.operation?.response
    }

    /// Pauses the transfer: its connection is released and the body so far kept.
    public func pause() {
        self.operation?.pause()
    }

    /// Resumes a paused transfer.
    public func resume() {
        self.operation?.resume()
    }

    /// Cancels the request; ``value`` then throws the cancellation error.
    public func cancel() {
        self.operation?.cancel()
    }

    /// Whether the request has finished (with a value or an error).
    public var isFinished: Bool {
        self.operation?.isFinished ?? true
    }
}
