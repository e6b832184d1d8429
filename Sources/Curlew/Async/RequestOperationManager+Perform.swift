import CurlewOperations
import CurlewSerialization
import CurlewTransport
import Foundation
import HTTPTypes

/// The async dialect's one path, straight over the transport: no `Operation`, no queue, no
/// notification, no hop it does not need.
///
/// Each attempt is adapted by the manager's interceptor, runs as one transfer of the manager's
/// transport (through the request's ``InstrumentedTransport`` when something observes it), and is judged by the interceptor and the retry policy; the value is then
/// serialized in the awaiting task — on a processing queue when the body is large, so that a long
/// decode does not hold one of the cooperative pool's few threads. Nothing of it runs on the network
/// context.
extension RequestOperationManager {
    /// Bodies at least this large are serialized on a processing queue rather than in the task.
    static let largeBody = 1 << 20

    /// Sends a prepared request and returns what `deliver` makes of the last attempt's response (any
    /// status): the request is over when `deliver` returns or anything throws, which is when its
    /// monitors hear it finish and its span ends.
    ///
    /// - Parameters:
    ///   - request: The request as the manager sends it (``prepared(_:)``).
    ///   - run: What cancels, pauses and resumes it (a ``RequestTask`` keeps it).
    ///   - snapshot: The settings it runs with; the manager's current ones by default.
    ///   - deliver: Makes the caller's value (decodes, validates) from the response.
    /// - Throws: `TransferError` (cancelled, or the transfer failed); the interceptor's error; what
    ///   `deliver` throws.
    func perform<Value>(
        _ request: TransferRequest, run: RequestRun = RequestRun(), snapshot: Settings.Snapshot? = nil,
        deliver: (TransferResponse) async throws -> Value
    ) async throws -> Value {
        guard self.runs.insert(run) else {
            throw TransferError(.cancelled, "The manager has shut down.", failingURL: request.url)
        }
        defer { self.runs.remove(run) }
        let snapshot = snapshot ?? self.snapshot
        let (policy, interceptor, budget) = (snapshot.retryPolicy, snapshot.interceptor, snapshot.retryBudget)
        guard let observers = snapshot.observers else {
            let response = try await self.attempts(request, run: run, on: self.runner, observation: nil,
                                                   policy: policy, interceptor: interceptor, budget: budget)
            return try await deliver(response)
        }
        let observation = observers.begin(request, dialect: .async, over: self.runner, engine: self.runnerEngine)
        observation.startSpan()
        do {
            let response = try await self.attempts(request, run: run, on: observation, observation: observation,
                                                   policy: policy, interceptor: interceptor, budget: budget)
            let value = try await deliver(response)
            observation.finish(.success(response))
            return value
        } catch {
            observation.finish(.failure(error))
            throw error
        }
    }

    /// Sends a prepared request and returns the last attempt's response (any status).
    func perform(_ request: TransferRequest, run: RequestRun = RequestRun(), snapshot: Settings.Snapshot? = nil) async throws -> TransferResponse {
        try await self.perform(request, run: run, snapshot: snapshot) { $0 }
    }

    /// Runs the attempts of `request` on `transport` until one is not retried, and returns its response.
    private func attempts(
        _ request: TransferRequest, run: RequestRun, on transport: any TransferRunning, observation: InstrumentedTransport?,
        policy: RetryPolicy, interceptor: (any RequestInterceptor)?, budget: RetryBudget?
    ) async throws -> TransferResponse {
        var attempt = 1
        while true {
            let attemptRequest: TransferRequest
            if let interceptor {
                attemptRequest = try await interceptor.adapt(request, attempt: attempt)
                observation?.adapted(attemptRequest.head, attempt: attempt)
            } else {
                attemptRequest = request
            }
            let outcome = await run.transfer(attemptRequest, on: transport)
            if run.isCancelled { throw Self.cancellation(outcome, url: request.url) }
            guard let (delay, decider) = await Self.retryDelay(after: outcome, of: attemptRequest, attempt: attempt,
                                                               policy: policy, interceptor: interceptor, budget: budget) else {
                var response = try outcome.get()
                response.metrics.retryCount = attempt - 1
                return response
            }
            observation?.retrying(after: delay, because: RetryReason(attempt: attempt, outcome: outcome.map(\.head), decidedBy: decider))
            guard await run.wait(delay) else {
                throw TransferError.cancelled(url: request.url)
            }
            attempt += 1
        }
    }

    /// Sends a prepared request whose response body is streamed, and returns once an attempt's head
    /// was not retried: the interceptor and the retry policy judge each head (a retried attempt's
    /// transfer is cancelled). The run stays with the manager until the returned body's transfer
    /// ended, so that ``shutdown()`` cancels it; the request finishes for its monitors and span then.
    func performStreaming(_ request: TransferRequest, bufferSize: Int, run: RequestRun) async throws -> StreamedResponse {
        guard self.runs.insert(run) else {
            throw TransferError(.cancelled, "The manager has shut down.", failingURL: request.url)
        }
        var handedOver = false
        defer { if !handedOver { self.runs.remove(run) } }
        let snapshot = self.snapshot
        let (policy, interceptor, budget) = (snapshot.retryPolicy, snapshot.interceptor, snapshot.retryBudget)
        let observation = snapshot.observers?.begin(request, dialect: .streaming, over: self.runner, engine: self.runnerEngine)
        observation?.startSpan()
        let transport = observation ?? self.runner
        var attempt = 1
        do {
            while true {
                var attemptRequest = request
                if let interceptor {
                    attemptRequest = try await interceptor.adapt(request, attempt: attempt)
                    observation?.adapted(attemptRequest.head, attempt: attempt)
                }
                let stream = ResponseBodyStream(bufferSize: bufferSize)
                attemptRequest.destination = .stream(stream)
                let ended = StreamEnd(progress: run.progress)
                let head = await run.stream(attemptRequest, into: stream, on: transport, ended: ended)
                if run.isCancelled {
                    stream.cancel()
                    throw TransferError.cancelled(url: request.url)
                }
                var metrics = TransferMetrics()
                metrics.retryCount = attempt - 1
                let outcome = head.map { TransferResponse(head: $0.0, body: nil, fileURL: nil, url: $0.1, metrics: metrics) }
                let retry = await Self.retryDelay(after: outcome, of: attemptRequest, attempt: attempt,
                                                  policy: policy, interceptor: interceptor, budget: budget)
                guard let retry else {
                    let (head, url) = try head.get()
                    handedOver = true
                    ended.whenEnded { [runs = self.runs] result in
                        runs.remove(run)
                        observation?.finish(result.mapError { $0 })
                    }
                    return StreamedResponse(head: head, url: url, body: stream.body)
                }
                stream.cancel()
                observation?.retrying(after: retry.delay,
                                      because: RetryReason(attempt: attempt, outcome: outcome.map(\.head), decidedBy: retry.decider))
                guard await run.wait(retry.delay) else {
                    throw TransferError.cancelled(url: request.url)
                }
                attempt += 1
            }
        } catch {
            observation?.finish(.failure(error))
            throw error
        }
    }

    /// How long to wait before sending the request again after attempt `attempt` ended with
    /// `outcome`, and who decided — the interceptor first, then the retry policy within the manager's
    /// retry budget (an interceptor's own retries do not draw on it) — or `nil` to keep the outcome
    /// (also when the request's streamed body was already read: it cannot be sent again).
    private static func retryDelay(
        after outcome: Result<TransferResponse, TransferError>, of request: TransferRequest, attempt: Int,
        policy: RetryPolicy, interceptor: (any RequestInterceptor)?, budget: RetryBudget?
    ) async -> (delay: Duration, decider: RetryReason.Decider)? {
        if attempt == 1, policy.maximumAttempts > 1 { budget?.recordFirstAttempt() }
        var decision = RetryDecision.doNotRetry
        var decider = RetryReason.Decider.interceptor
        if let interceptor {
            decision = await interceptor.retry(request, after: outcome, attempt: attempt)
        }
        if decision == .doNotRetry, attempt < policy.maximumAttempts {
            decider = .retryPolicy
            decision = policy.decide(after: outcome.map(\.head), method: request.head.method, attempt: attempt)
            if case .retry = decision, let budget, !budget.withdrawRetry() { decision = .doNotRetry }
        }
        // A streamed body that curl has read cannot be sent again: the attempt's outcome stands.
        guard case .retry(let delay) = decision, request.canBeSentAgain else { return nil }
        return (delay, decider)
    }

    /// The cancellation a cancelled run ends with: the transfer's own when it has one.
    private static func cancellation(_ outcome: Result<TransferResponse, TransferError>, url: URL?) -> TransferError {
        if case .failure(let error) = outcome, error.code == .cancelled { return error }
        return TransferError.cancelled(url: url)
    }

    /// `serializer`'s value for `response`, made in the calling task, or on a processing queue
    /// when the body is large.
    func serialize<Serializer: ResponseSerializer>(
        _ response: TransferResponse, with serializer: Serializer, method: HTTPRequest.Method
    ) async throws -> Serializer.Output {
        let serialize: @Sendable () throws -> Serializer.Output = {
            try serializer.serialize(response: response.head, body: response.body, url: response.url, requestMethod: method)
        }
        guard let body = response.body, body.count >= Self.largeBody else { return try serialize() }
        return try await Self.offloaded(serialize)
    }

    /// What `work` returns or throws, run on a processing queue: a long decode holds none of the
    /// cooperative pool's threads, and never the network context.
    static func offloaded<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            ProcessingQueues.run { continuation.resume(with: Result(catching: work)) }
        }
    }
}
