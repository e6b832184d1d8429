import CurlewOperations
import CurlewTransport
import Foundation

/// A request of the async dialect that can be controlled while it runs: pause it, resume it, cancel
/// it, and `await` its value.
///
/// ```swift
/// let task = api.dataTask(.get, "exports/big.csv", as: Data.self)
/// task.pause()                       // releases the connection, keeps the body so far
/// task.resume()                      // continues with a Range request when the server allows it
/// let data = try await task.value    // cancelling the awaiting task cancels the request
/// ```
///
/// The request starts when the task is made, and runs like the manager's other async methods
/// (retries, interceptor, shutdown). ``value`` may be awaited any number of times, from any number
/// of tasks, before or after it finished; cancelling one awaiting task cancels the request.
public final class RequestTask<Value: Sendable>: Sendable {
    private let run: RequestRun
    private let task: Task<DecodedResponse<Value>, any Error>
    private let finished = Locked(false)
    private let progressStreams: ProgressStreams

    init(operation: @escaping @Sendable (RequestRun) async throws -> DecodedResponse<Value>) {
        let streams = ProgressStreams()
        let run = RequestRun(progress: { progress in streams.report(progress) })
        self.run = run
        self.progressStreams = streams
        let finished = self.finished
        self.task = Task {
            defer { finished.set(true) }
            do {
                let response = try await operation(run)
                await streams.finish()
                return response
            } catch {
                await streams.finish()
                throw error
            }
        }
    }

    /// The request's upload and download progress while it runs, as an `AsyncSequence` that keeps the
    /// newest value only: a reader that falls behind skips to the latest counts rather than queueing
    /// every report, and never holds up the transfer.
    ///
    /// ```swift
    /// var request = try api.request(.put, "files/big.bin")
    /// request.body = .file(fileURL)
    /// let task = api.task(for: request, as: Data.self)
    /// for await progress in task.progress {
    ///     print(progress.bytesSent, "of", progress.expectedBytesToSend ?? -1)
    /// }                                      // ends when the request has ended
    /// _ = try await task.value
    /// ```
    ///
    /// Each access makes a new stream for one reader; it starts with the latest value so far and ends
    /// after the last one, once the request has finished (at once for a finished request). Values
    /// arrive on a queue of the library's, never the network context's; within an attempt the counts
    /// only grow (a retry's transfer counts again from zero).
    public var progress: AsyncStream<TransferProgress> {
        self.progressStreams.stream()
    }

    /// The value, once the request has finished.
    ///
    /// - Throws: What the manager's async methods throw (see ``RequestOperationManager``); the
    ///   cancellation when the request or the awaiting task was cancelled.
    public var value: Value {
        get async throws {
            try await self.response.value
        }
    }

    /// The value with its response (status, headers, URL, timings), once the request has finished.
    ///
    /// - Throws: As ``value``.
    public var response: DecodedResponse<Value> {
        get async throws {
            try await withTaskCancellationHandler {
                try await self.task.value
            } onCancel: {
                self.run.cancel()
            }
        }
    }

    /// Pauses the transfer: its connection is released and the body so far kept.
    public func pause() {
        self.run.pause()
    }

    /// Resumes a paused transfer.
    public func resume() {
        self.run.resume()
    }

    /// Cancels the request; ``value`` then throws the cancellation error.
    public func cancel() {
        self.run.cancel()
    }

    /// Whether the request has finished (with a value or an error).
    public var isFinished: Bool {
        self.finished.value
    }

    /// Where a running request is.
    public enum State: Sendable, Hashable {
        /// Preparing or running an attempt.
        case running
        /// Paused by ``pause()``.
        case paused
        /// Waiting before a retry (the retry policy's backoff, or the server's `Retry-After`).
        case waitingForRetry
        /// Finished, with a value or an error.
        case finished
    }

    /// Where the request is now.
    public var state: State {
        if self.isFinished { return .finished }
        if self.run.isWaiting { return .waitingForRetry }
        return self.run.isPausedNow ? .paused : .running
    }

    /// How many attempts have been sent so far (1 plus the retries).
    public var attemptCount: Int {
        self.run.attempts
    }
}

extension RequestOperationManager {
    /// Starts a request and returns a handle to control and await it.
    ///
    /// ```swift
    /// let task = api.dataTask(.get, "big", as: Data.self)
    /// task.pause(); task.resume()
    /// let data = try await task.value
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: Resolved against the base URL.
    ///   - parameters: Parameters, or `nil`.
    ///   - headers: Header fields for this request only.
    ///   - type: What to decode (`Data` for the raw body, `String` for text).
    /// - Returns: The task; if the request cannot be built, its ``RequestTask/value`` throws why.
    public func dataTask<Value: Decodable & Sendable>(
        _ method: HTTPRequest.Method, _ path: String, parameters: [String: any ParameterConvertible]? = nil, headers: [String: String] = [:],
        as type: Value.Type = Value.self
    ) -> RequestTask<Value> {
        RequestTask { run in
            let request = try self.request(method, path, parameters: Self.encodable(parameters), headers: headers)
            return try await self.response(for: request, as: type, run: run)
        }
    }

    /// Starts `request` (prepared as the manager sends it) and returns a handle to it.
    ///
    /// - Parameters:
    ///   - request: Any request, for example one from ``request(_:_:parameters:)-(_,_,Parameters?)``
    ///     with options changed.
    ///   - type: What to decode (`Data` for the raw body, `String` for text).
    /// - Returns: The task.
    public func task<Value: Decodable & Sendable>(for request: TransferRequest, as type: Value.Type = Value.self) -> RequestTask<Value> {
        RequestTask { run in
            try await self.response(for: self.prepared(request), as: type, run: run)
        }
    }
}
