extension RequestOperation {
    /// The life of one ``RequestOperation``, as a value with no I/O.
    ///
    /// ```
    ///            start                  transfer completed           result processed
    ///   ready ─────────▶ executing ──────────────────────▶ completing ─────────────────▶ finished
    ///     │  │            ▲ │     ▲                         ▲    │ retry scheduled         ▲
    ///     │  │ start      │ │pause│ resume                  │    ▼                         │
    ///     │  │ (adapting) │ ▼     │       transfer completed│   waiting ── cancel ─────────┤
    ///     │  └─▶ preparing┘ paused ─────────────────────────┘    │ retry due               │
    ///     │       ▲  │ attempt prepared                          ▼                         │
    ///     │       │  └────────────────── cancel, preparation failed ───────────────────────┤
    ///     │       └──────────────────────────────────── preparing (or executing) ◀─────────┘
    ///     └── start when cancelled ─────────────────────────────────────────────────────▶ finished
    /// ```
    ///
    /// An operation with an interceptor *prepares* each attempt (its request is adapted,
    /// asynchronously) before the transfer starts; an operation that retries *waits* out the backoff
    /// between one attempt's completion and the next attempt. Neither has a transfer, so a cancel
    /// there finishes the operation at once.
    ///
    /// `isCancelled` is a flag beside the state, as in Foundation: cancelling a ready operation only
    /// sets it (the operation finishes when it is started); cancelling an executing or paused one
    /// also cancels its transfer, whose completion then finishes the operation. A cancel that lands
    /// at any moment before `finished` makes the operation fail with the cancellation error.
    ///
    /// `completing` is AFNetworking's "finished connection, not yet finished operation": the
    /// transfer is done and its response is being serialized on the processing queue, off the
    /// network context. To Foundation the operation is still executing; pause and resume no longer
    /// apply.
    ///
    /// Each event returns a ``Transition``: the ``Action`` the operation takes and the
    /// `didChangeValue(forKey:)` posts it owes Foundation, in order (only the keys whose values
    /// changed: `isExecuting` before `isFinished`). An event that does not apply returns
    /// ``Action/none`` and changes nothing, as AFNetworking ignores illegal transitions. Two events
    /// cannot happen in some states at all — the transfer completes exactly once and only after
    /// the operation created it, and its result is processed once — and those trap.
    ///
    /// The two events that bring data carry it in, and the actions that need it carry it out: the
    /// transfer's `Outcome` and the `Processed` result (generic, so that the tests use plain values).
    package struct StateMachine<Outcome: Sendable, Processed: Sendable>: Sendable {
        /// Where the operation is in its life.
        package enum State: Hashable, Sendable, CaseIterable {
            /// Created, not started (`isReady` is Foundation's: no unfinished dependencies).
            case ready
            /// Started: its transfer is running (or about to on the network context).
            case executing
            /// Its transfer is paused: connection released, body so far kept.
            case paused
            /// Its transfer completed; the result is being processed off the network context (a retry
            /// decided, or the response serialized).
            case completing
            /// The request of the next attempt is being adapted (by an interceptor); no transfer yet.
            case preparing
            /// Waiting out the backoff before the next attempt; no transfer.
            case waiting
            /// Finished, with a result. Terminal.
            case finished
        }

        /// A key whose `didChangeValue(forKey:)` Foundation's `OperationQueue` observes.
        package enum Key: String, Hashable, Sendable {
            case isExecuting
            case isFinished
        }

        /// What the operation does once the state has changed.
        package enum Action: Sendable {
            /// Nothing: the event does not apply in this state.
            case none
            /// Cancelled with no transfer to cancel: tell Foundation (`super.cancel()`), which, for
            /// an operation not started yet, clears its dependencies and posts `isReady` so that a
            /// queue starts it promptly (and it then finishes as cancelled).
            case markCancelled
            /// Create the transfer and start it; a did-start notification follows.
            case startTransfer
            /// Adapt the request for the next attempt (asynchronously); ``attemptPrepared()`` or
            /// ``preparationFailed(_:)`` follows.
            case prepareAttempt
            /// Wait this long, then tell the machine ``retryDue(preparing:)``.
            case waitForRetry(Duration)
            /// Cancelled while no transfer runs (adapting the request, or waiting to retry): tell
            /// Foundation, abandon the pending step, and finish with the cancellation error.
            case cancelPendingAttempt
            /// Cancel the transfer (running or paused): it completes with a cancellation error.
            /// Foundation is told too.
            case cancelTransfer
            /// Pause the transfer; a did-pause notification follows.
            case pauseTransfer
            /// Resume the paused transfer (it continues with a range request when it can).
            case resumeTransfer
            /// The transfer completed: process its outcome off the network context.
            case processResult(Outcome)
            /// The operation is finished: deliver its result, or the cancellation error.
            case finish(Finish)
        }

        /// Which result a finished operation reports.
        package enum Finish: Sendable {
            /// The processed result of its transfer (the response object, or an error).
            case withResult(Processed)
            /// The cancellation error: it was cancelled before it finished. Carries the processed
            /// result when there was one (a cancelled transfer's own error names the URL it fetched).
            case withCancellation(Processed?)
        }

        /// The outcome of one event.
        package struct Transition: Sendable {
            /// What to do after the state changed.
            package var action: Action
            /// The keys to post, in this order, after the lock is released.
            package var posts: [Key]

            package init(_ action: Action, posts: [Key] = []) {
                self.action = action
                self.posts = posts
            }

            /// Nothing to do, nothing to post.
            package static var none: Transition { Transition(.none) }
        }

        package private(set) var state: State
        package private(set) var isCancelled: Bool

        /// Creates a machine in `state` (tests start anywhere; operations start `ready`).
        package init(state: State = .ready, isCancelled: Bool = false) {
            self.state = state
            self.isCancelled = isCancelled
        }

        /// What `Operation.isExecuting` answers: the operation has started and not finished, and
        /// its transfer is not paused.
        package var isExecuting: Bool {
            Self.isExecuting(self.state)
        }

        /// What `Operation.isFinished` answers.
        package var isFinished: Bool {
            self.state == .finished
        }

        /// Whether the operation is paused.
        package var isPaused: Bool {
            self.state == .paused
        }

        // MARK: Events

        /// `start()` was called; `isReady` is Foundation's readiness (dependencies finished), and
        /// `preparing` whether each attempt's request is adapted first.
        ///
        /// A cancelled operation finishes at once with the cancellation error, ready or not; a
        /// ready one starts executing (or preparing its first attempt); anything else (not ready,
        /// already started, paused, finished) is ignored.
        package mutating func start(isReady: Bool, preparing: Bool = false) -> Transition {
            switch self.state {
            case .ready:
                if self.isCancelled {
                    return self.move(to: .finished, .finish(.withCancellation(nil)))
                }
                guard isReady else { return .none }
                return preparing ? self.move(to: .preparing, .prepareAttempt) : self.move(to: .executing, .startTransfer)
            case .executing, .paused, .completing, .preparing, .waiting, .finished:
                return .none
            }
        }

        /// `cancel()` was called. Only the first cancel of an unfinished operation does anything.
        package mutating func cancel() -> Transition {
            guard !self.isCancelled else { return .none }
            switch self.state {
            case .ready, .completing:
                self.isCancelled = true
                return Transition(.markCancelled)
            case .executing, .paused:
                self.isCancelled = true
                return Transition(.cancelTransfer)
            case .preparing, .waiting:
                self.isCancelled = true
                return self.move(to: .finished, .cancelPendingAttempt)
            case .finished:
                return .none
            }
        }

        /// `pause()` was called. Only an executing operation that is not cancelled pauses.
        package mutating func pause() -> Transition {
            switch self.state {
            case .executing where !self.isCancelled:
                return self.move(to: .paused, .pauseTransfer)
            case .ready, .executing, .paused, .completing, .preparing, .waiting, .finished:
                return .none
            }
        }

        /// `resume()` was called. Only a paused operation that is not cancelled resumes.
        package mutating func resume() -> Transition {
            switch self.state {
            case .paused where !self.isCancelled:
                return self.move(to: .executing, .resumeTransfer)
            case .ready, .executing, .paused, .completing, .preparing, .waiting, .finished:
                return .none
            }
        }

        /// The transfer reported its one completion (on the network context), with `outcome`.
        ///
        /// A paused operation can get here too: its transfer was cancelled, or it completed on the
        /// context before the pause reached it.
        package mutating func transferCompleted(_ outcome: Outcome) -> Transition {
            switch self.state {
            case .executing, .paused:
                return self.move(to: .completing, .processResult(outcome))
            case .ready, .completing, .preparing, .waiting, .finished:
                fatalError("Internal inconsistency: a transfer completed while its operation was \(self.state).")
            }
        }

        /// The transfer's result was processed (serialized) on the processing queue, giving `result`.
        package mutating func resultProcessed(_ result: Processed) -> Transition {
            switch self.state {
            case .completing:
                return self.move(to: .finished, .finish(self.isCancelled ? .withCancellation(result) : .withResult(result)))
            case .ready, .executing, .paused, .preparing, .waiting, .finished:
                fatalError("Internal inconsistency: a result was processed while the operation was \(self.state).")
            }
        }

        /// The completed attempt is to be retried after `wait` (decided on the processing queue).
        /// Only a completing operation that is not cancelled waits; otherwise nothing happens, and the
        /// caller processes the attempt's result as usual (a cancel before the finish wins).
        package mutating func retryScheduled(after wait: Duration) -> Transition {
            switch self.state {
            case .completing where !self.isCancelled:
                return self.move(to: .waiting, .waitForRetry(wait))
            case .ready, .executing, .paused, .completing, .preparing, .waiting, .finished:
                return .none
            }
        }

        /// The backoff is over: the next attempt starts (after its request is adapted when
        /// `preparing`). Ignored unless waiting (a cancel may have finished the operation first).
        package mutating func retryDue(preparing: Bool) -> Transition {
            switch self.state {
            case .waiting:
                return preparing ? self.move(to: .preparing, .prepareAttempt) : self.move(to: .executing, .startTransfer)
            case .ready, .executing, .paused, .completing, .preparing, .finished:
                return .none
            }
        }

        /// The next attempt's request is ready: its transfer starts. Ignored unless preparing.
        package mutating func attemptPrepared() -> Transition {
            switch self.state {
            case .preparing:
                return self.move(to: .executing, .startTransfer)
            case .ready, .executing, .paused, .completing, .waiting, .finished:
                return .none
            }
        }

        /// Adapting the request failed: the operation finishes with `result` (the failure). Ignored
        /// unless preparing.
        package mutating func preparationFailed(_ result: Processed) -> Transition {
            switch self.state {
            case .preparing:
                return self.move(to: .finished, .finish(.withResult(result)))
            case .ready, .executing, .paused, .completing, .waiting, .finished:
                return .none
            }
        }

        // MARK: Helpers

        private static func isExecuting(_ state: State) -> Bool {
            switch state {
            case .executing, .completing, .preparing, .waiting: return true
            case .ready, .paused, .finished: return false
            }
        }

        /// Changes the state and lists the keys whose values changed, `isExecuting` first.
        private mutating func move(to next: State, _ action: Action) -> Transition {
            let previous = self.state
            self.state = next
            var posts: [Key] = []
            if Self.isExecuting(previous) != Self.isExecuting(next) { posts.append(.isExecuting) }
            if (previous == .finished) != (next == .finished) { posts.append(.isFinished) }
            return Transition(action, posts: posts)
        }
    }
}

extension RequestOperation.StateMachine: Equatable where Outcome: Equatable, Processed: Equatable {}
extension RequestOperation.StateMachine: Hashable where Outcome: Hashable, Processed: Hashable {}
extension RequestOperation.StateMachine.Action: Equatable where Outcome: Equatable, Processed: Equatable {}
extension RequestOperation.StateMachine.Action: Hashable where Outcome: Hashable, Processed: Hashable {}
extension RequestOperation.StateMachine.Finish: Equatable where Processed: Equatable {}
extension RequestOperation.StateMachine.Finish: Hashable where Processed: Hashable {}
extension RequestOperation.StateMachine.Transition: Equatable where Outcome: Equatable, Processed: Equatable {}
extension RequestOperation.StateMachine.Transition: Hashable where Outcome: Hashable, Processed: Hashable {}
