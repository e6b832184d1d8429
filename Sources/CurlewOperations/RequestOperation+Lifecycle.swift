import CurlewTransport
import Dispatch
import Foundation

// How an event becomes effects.
//
// Every event (start, cancel, pause, resume, the transfer's completion, the processed result) runs
// the state machine under the operation's one lock. Two kinds of effect follow:
//
// - **Under the lock**, the effects whose order must match the order of the transitions and which
//   cannot block: the did-start and did-pause notifications are enqueued, and the transfer's
//   start/cancel/pause/resume are *queued* as commands in the operation's outbox. Issued in any other
//   order, two threads' commands could reach the network context in the opposite order of their
//   transitions: a pause and a resume racing would leave the operation executing and its transfer
//   paused, for ever.
// - **After unlocking**, the outbox is emptied, in order, by one thread at a time (whichever queued
//   into an idle outbox): the scheduler is never called with the lock held (the run-loop backend's
//   first `perform` waits for its thread to start). Then everything that runs code we do not control
//   or that calls back into the operation: `super.cancel()`, the `didChangeValue(forKey:)` posts
//   (Foundation's queue runs its bookkeeping there and calls the operation's getters), the hop to
//   the processing queue, resuming awaiting tasks, dispatching handlers, the did-finish notification.
extension RequestOperation {
    // MARK: Control

    /// Pauses an executing operation: its transfer leaves the network, keeping the body received so
    /// far, and ``didPauseNotification`` is posted. Ignored unless executing and not cancelled.
    ///
    /// The operation keeps its place in its queue while paused. Cancelling a paused operation
    /// cancels its transfer, and the operation finishes.
    public func pause() {
        self.apply { $0.pause() }
    }

    /// Resumes a paused operation: its transfer continues with a `Range` + `If-Range` request when
    /// the response had a strong validator and the server answers 206 for the same entity, and
    /// starts the body over otherwise. The delivered body is byte-identical either way. Ignored
    /// unless paused.
    public func resume() {
        self.apply { $0.resume() }
    }

    // MARK: Network context side

    /// The transfer's one completion, on the network context: record it and hop off.
    func transferDidComplete(_ outcome: Result<TransferResponse, TransferError>) {
        self.apply { $0.transferCompleted(outcome) }
    }

    /// On the processing queue `lane`: decide whether to retry the attempt (the interceptor first,
    /// on the cooperative pool, then the retry policy); if not, serialize the response and finish.
    func processResult(_ outcome: Result<TransferResponse, TransferError>, on lane: ProcessingQueues.Lane) {
        let (policy, interceptor, budget, attempt, request, isCancelled) = self.storage.withLock {
            ($0.retryPolicy, $0.interceptor, $0.retryBudget, $0.attemptCount, $0.attemptRequest, $0.machine.isCancelled)
        }
        if attempt == 1, policy.maximumAttempts > 1 { budget?.recordFirstAttempt() }
        guard !isCancelled, interceptor != nil || attempt < policy.maximumAttempts else {
            self.serializeResult(outcome, on: lane)
            return
        }
        let method = request.head.method
        guard let interceptor else {
            let decision = policy.decide(after: outcome.map(\.head), method: method, attempt: attempt)
            self.conclude(outcome, Self.withinBudget(decision, budget), on: lane)
            return
        }
        let task = Task {
            let asked = await interceptor.retry(request, after: outcome, attempt: attempt)
            let decision = asked == .doNotRetry
                ? Self.withinBudget(policy.decide(after: outcome.map(\.head), method: method, attempt: attempt), budget) : asked
            self.process { lane in self.conclude(outcome, decision, on: lane) }
        }
        self.storage.withLock { $0.pendingTask = task }
    }

    /// The retry policy's `decision`, unless it is a retry that `budget` refuses.
    private static func withinBudget(_ decision: RetryDecision, _ budget: RetryBudget?) -> RetryDecision {
        guard case .retry = decision, let budget, !budget.withdrawRetry() else { return decision }
        return .doNotRetry
    }

    /// On the processing queue `lane`: wait and retry, or serialize the attempt's result.
    private func conclude(
        _ outcome: Result<TransferResponse, TransferError>, _ decision: RetryDecision, on lane: ProcessingQueues.Lane
    ) {
        if case .retry(let wait) = decision {
            var waits = false
            self.apply { machine in
                let transition = machine.retryScheduled(after: wait)
                if case .waitForRetry = transition.action { waits = true }
                return transition
            }
            if waits { return }
        }
        self.serializeResult(outcome, on: lane)
    }

    /// On the processing queue `lane`: serialize a successful response, then finish.
    private func serializeResult(_ outcome: Result<TransferResponse, TransferError>, on lane: ProcessingQueues.Lane) {
        let (serializer, isCancelled) = self.storage.withLock { ($0.responseSerializer, $0.machine.isCancelled) }
        let result: Result<(any Sendable)?, any Error>
        switch outcome {
        case .failure(let error):
            result = .failure(error)
        case .success(let response):
            if isCancelled {
                // The finish will report the cancellation anyway; do not serialize for nothing.
                result = .failure(TransferError.cancelled(url: response.url))
            } else {
                result = Result {
                    let value = try serializer.serialize(response: response.head, body: response.body, url: response.url,
                                                         requestMethod: self.request.head.method)
                    return flattened(value)
                }
            }
        }
        self.apply(on: lane) { $0.resultProcessed(result) }
    }

    // MARK: Applying transitions

    /// The machine as the operation runs it: the transfer's outcome in, the serialized result out.
    typealias Machine = StateMachine<Result<TransferResponse, TransferError>, Result<(any Sendable)?, any Error>>

    /// What is left to do once the lock is released.
    private struct FollowUp {
        /// The keys whose changes Foundation is told of, in order.
        var posts: [Machine.Key]
        /// Whether Foundation is told of a cancel (`super.cancel()`).
        var tellsFoundationOfCancel = false
        var issuesTransferCommands = false
        var processing: Result<TransferResponse, TransferError>?
        var delivery: Delivery?
        var progressQueue: DispatchQueue?
        /// The attempt whose request the interceptor adapts now.
        var preparation: (interceptor: any RequestInterceptor, attempt: Int)?
        /// The backoff wait to schedule, and whether the next attempt is prepared first.
        var wait: (delay: Duration, preparing: Bool)?
        /// The interceptor's task a cancel abandoned.
        var abandoned: Task<Void, Never>?
    }

    /// A command for the operation's transfer, queued under the lock in transition order and
    /// issued after it (see the top of this file).
    enum TransferCommand {
        case start(any TransferControl)
        case cancel(any TransferControl)
        case pause(any TransferControl)
        case resume(any TransferControl)

        func issue() {
            switch self {
            case .start(let transfer): transfer.start()
            case .cancel(let transfer): transfer.cancel()
            case .pause(let transfer): transfer.pause()
            case .resume(let transfer): transfer.resume()
            }
        }
    }

    /// A finished operation's result and where it goes, taken out of the storage at the finish.
    struct Delivery {
        var result: Result<(any Sendable)?, any Error>
        var success: (@Sendable (RequestOperation, (any Sendable)?) -> Void)?
        var failure: (@Sendable (RequestOperation, any Error) -> Void)?
        var completionQueue: DispatchQueue
        var group: DispatchGroup?
        var waiters: [CheckedContinuation<(any Sendable)?, any Error>]
        var notificationQueue: DispatchQueue
    }

    /// Runs `event` on the state machine under the lock, queues the ordered effects there, and does
    /// the rest after unlocking. `lane` is the processing lane whose block calls this, if any: a
    /// finish there may run its handler on the lane's thread (see ``deliver(_:on:)``).
    func apply(on lane: ProcessingQueues.Lane? = nil, _ event: (inout Machine) -> Machine.Transition) {
        let followUp = self.storage.withLock { state -> FollowUp in
            // The follow-up keeps only what it needs after unlocking, and the action is consumed
            // by the switch: its payload (a whole response) is not copied again for later.
            let transition = event(&state.machine)
            var followUp = FollowUp(posts: transition.posts)
            let action = transition.action
            switch consume action {
            case .none:
                break
            case .markCancelled:
                // Completing: a retry decision may be under way; its task is told (after unlocking).
                followUp.tellsFoundationOfCancel = true
                followUp.abandoned = state.pendingTask
            case .startTransfer:
                let transfer = self.transport.makeTransfer(state.transferRequest(), observer: TransferEvents(operation: self))
                state.transfer = transfer
                state.attemptCount += 1
                if state.attemptCount == 1 { self.enqueue(Self.didStartNotification, on: state.notificationQueue) }
                followUp.issuesTransferCommands = state.queue(.start(transfer))
            case .prepareAttempt:
                if state.attemptCount == 0 { self.enqueue(Self.didStartNotification, on: state.notificationQueue) }
                if let interceptor = state.interceptor { followUp.preparation = (interceptor, state.attemptCount + 1) }
            case .waitForRetry(let delay):
                state.transfer = nil
                state.response = nil
                state.pendingTask = nil
                followUp.wait = (delay, state.interceptor != nil)
            case .cancelPendingAttempt:
                followUp.tellsFoundationOfCancel = true
                followUp.abandoned = state.pendingTask
                state.pendingTask = nil
                followUp.delivery = state.finish(with: .failure(TransferError.cancelled(url: state.attemptRequest.url)))
                followUp.progressQueue = state.progressAfterFinish()
            case .cancelTransfer:
                followUp.tellsFoundationOfCancel = true
                if let transfer = state.transfer { followUp.issuesTransferCommands = state.queue(.cancel(transfer)) }
            case .pauseTransfer:
                if let transfer = state.transfer { followUp.issuesTransferCommands = state.queue(.pause(transfer)) }
                self.enqueue(Self.didPauseNotification, on: state.notificationQueue)
            case .resumeTransfer:
                if let transfer = state.transfer { followUp.issuesTransferCommands = state.queue(.resume(transfer)) }
            case .processResult(.success(var response)):
                response.metrics.retryCount = max(state.attemptCount - 1, 0)
                state.response = response
                state.enterCompletionGroup()
                followUp.processing = .success(response)
            case .processResult(let outcome):
                state.enterCompletionGroup()
                followUp.processing = outcome
            case .finish(let finish):
                let result: Result<(any Sendable)?, any Error>
                switch finish {
                case .withResult(let processed):
                    result = processed
                case .withCancellation(.failure(let error as TransferError)) where error.code == .cancelled:
                    result = .failure(error)  // the transfer's own, with the URL it was fetching
                case .withCancellation:
                    result = .failure(TransferError.cancelled(url: state.response?.url ?? self.request.url))
                }
                followUp.delivery = state.finish(with: result)
                followUp.progressQueue = state.progressAfterFinish()
            }
            return followUp
        }

        if followUp.issuesTransferCommands { self.issueTransferCommands() }
        if followUp.tellsFoundationOfCancel { super.cancel() }
        followUp.abandoned?.cancel()
        if let (delay, preparing) = followUp.wait {
            // Weakly: a cancelled operation finishes without waiting for this, and need not live on.
            SharedQueues.retries.asyncAfter(deadline: .now() + Self.timeInterval(delay)) { [weak self] in
                self?.apply { $0.retryDue(preparing: preparing) }
            }
        }
        if let (interceptor, attempt) = followUp.preparation {
            self.prepare(attempt, with: interceptor)
        }
        for key in followUp.posts {
            self.didChangeValue(forKey: key.rawValue)
        }
        if let outcome = followUp.processing {
            self.process { lane in self.processResult(outcome, on: lane) }
        }
        if let queue = followUp.progressQueue {
            queue.async { self.deliverProgress() }
        }
        if let delivery = followUp.delivery {
            self.deliver(delivery, on: lane)
        }
    }

    /// Runs `work` on a processing queue (see ``processingQueues``) and remembers which. The hand-off
    /// waits for the events the transport is delivering now (``TransferRunning/afterCurrentEvents(_:)``),
    /// so that the responses completed together wake the processing queue once.
    private func process(_ work: @escaping @Sendable (ProcessingQueues.Lane) -> Void) {
        self.transport.afterCurrentEvents {
            ProcessingQueues.run(work) { lane in self.storage.withLock { $0.processingQueue = lane.queue } }
        }
    }

    /// Adapts the request for `attempt` on the cooperative pool, then starts the attempt (or fails the
    /// operation with the interceptor's error).
    private func prepare(_ attempt: Int, with interceptor: any RequestInterceptor) {
        let request = self.request
        let task = Task {
            do {
                let adapted = try await interceptor.adapt(request, attempt: attempt)
                self.storage.withLock { $0.attemptRequest = adapted }
                self.apply { $0.attemptPrepared() }
            } catch {
                self.apply { $0.preparationFailed(.failure(error)) }
            }
        }
        self.storage.withLock { state in
            // A cancel may have come first and cleared the slot: then this task has nothing to keep.
            if state.machine.state == .preparing { state.pendingTask = task } else { task.cancel() }
        }
    }

    private static func timeInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(clamping: nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }

    /// Issues the queued transfer commands in order until the outbox is empty. Only the thread that
    /// queued into an idle outbox gets here; others' commands queued meanwhile are issued too.
    private func issueTransferCommands() {
        while let command = self.storage.withLock({ $0.nextTransferCommand() }) {
            command.issue()
        }
    }

    /// Hands a finished operation's result out: awaiting tasks, then the handler on the completion
    /// queue inside the completion group, then the did-finish notification.
    ///
    /// On a processing lane (`lane`), a handler for the library's default completion queue runs on
    /// the lane's thread, inside `sync` on that queue, when the lane can hold it (no block queued
    /// behind it there, another lane free to take responses: ``ProcessingQueues/claimForHandler(_:)``).
    /// It is still on the completion queue, in the group, once; one thread fewer wakes per request.
    /// The did-finish notification is queued first then, so a long handler does not hold it back.
    /// Any other queue, or a lane that cannot hold the handler: the handler is queued there.
    private func deliver(_ delivery: Delivery, on lane: ProcessingQueues.Lane?) {
        for waiter in delivery.waiters {
            waiter.resume(with: delivery.result)
        }
        let group = delivery.group
        var handler: (@Sendable () -> Void)?
        switch delivery.result {
        case .success(let object):
            if let success = delivery.success {
                handler = {
                    success(self, object)
                    group?.leave()
                }
            }
        case .failure(let error):
            if let failure = delivery.failure {
                handler = {
                    failure(self, error)
                    group?.leave()
                }
            }
        }
        guard let handler else {
            group?.leave()
            self.enqueue(Self.didFinishNotification, on: delivery.notificationQueue)
            return
        }
        if let lane, delivery.completionQueue === SharedQueues.callbacks, ProcessingQueues.claimForHandler(lane) {
            self.enqueue(Self.didFinishNotification, on: delivery.notificationQueue)
            delivery.completionQueue.sync(execute: handler)
            ProcessingQueues.releaseHandler(lane)
        } else {
            delivery.completionQueue.async(execute: handler)
            self.enqueue(Self.didFinishNotification, on: delivery.notificationQueue)
        }
    }
}

extension RequestOperation.Storage {
    /// Queues a transfer command; returns whether the caller must issue the outbox (it was idle).
    mutating func queue(_ command: RequestOperation.TransferCommand) -> Bool {
        self.transferCommands.append(command)
        guard !self.isIssuingTransferCommands else { return false }
        self.isIssuingTransferCommands = true
        return true
    }

    /// The next queued transfer command, or `nil` (and the outbox idle again) when none is left.
    mutating func nextTransferCommand() -> RequestOperation.TransferCommand? {
        guard !self.transferCommands.isEmpty else {
            self.isIssuingTransferCommands = false
            return nil
        }
        return self.transferCommands.removeFirst()
    }

    /// Enters the completion group once, remembering which group to leave.
    mutating func enterCompletionGroup() {
        guard self.enteredGroup == nil, let group = self.completionGroup else { return }
        group.enter()
        self.enteredGroup = group
    }

    /// The current attempt's request as the transport runs it: a body for a file goes to the
    /// operation's staging file first (see ``DownloadStaging``).
    mutating func transferRequest() -> TransferRequest {
        guard case .file(let destination) = self.attemptRequest.destination else { return self.attemptRequest }
        let staging: DownloadStaging
        if let current = self.staging, current.destination == destination {
            staging = current
        } else {
            self.staging?.discard()  // an interceptor chose another destination for this attempt
            staging = DownloadStaging(destination: destination)
            self.staging = staging
        }
        return staging.request(for: self.attemptRequest, serializer: self.responseSerializer)
    }

    /// Settles a download at the finish: the staged file replaces the destination when the
    /// operation succeeds with a response that wrote it (the transport reported a file: the staged
    /// one it was given), and is removed otherwise (a failure, a cancel, a status the destination
    /// does not take). Renaming under the lock is what makes a cancel that arrives now come too
    /// late, as for any finished operation: the destination and the result always agree. A rename
    /// that fails turns the success into its error.
    private mutating func settleDownload(_ result: Result<(any Sendable)?, any Error>) -> Result<(any Sendable)?, any Error> {
        guard let staging = self.staging else { return result }
        self.staging = nil
        let wroteStagedFile = self.response?.fileURL != nil
        if wroteStagedFile { self.response?.fileURL = nil }
        guard case .success = result, wroteStagedFile else {
            staging.discard()
            return result
        }
        do {
            try staging.commit()
        } catch {
            return .failure(error)
        }
        self.response?.fileURL = staging.destination
        return result
    }

    /// Records the result of a finished operation and takes out what delivering it needs; the
    /// handlers and the transfer are released here, which breaks any retain cycle through them.
    mutating func finish(with result: Result<(any Sendable)?, any Error>) -> RequestOperation.Delivery {
        self.enterCompletionGroup()
        let result = self.settleDownload(result)
        self.result = result
        self.transfer = nil
        let delivery = RequestOperation.Delivery(
            result: result,
            success: self.successHandler,
            failure: self.failureHandler,
            completionQueue: self.completionQueue ?? self.defaultCompletionQueue,
            group: self.enteredGroup,
            waiters: Array(self.waiters.values),
            notificationQueue: self.notificationQueue
        )
        self.successHandler = nil
        self.failureHandler = nil
        self.waiters = [:]
        self.enteredGroup = nil
        return delivery
    }
}
