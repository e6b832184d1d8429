/// The life of one transfer, and where its current response is, as a value with no I/O.
///
/// ```
///   idle ──start──▶ running(phase) ──curl finished / failed──▶ finished
///                   │          ▲
///             pause │          │ resume
///                   ▼          │
///                   paused ────┘
///   cancel: idle, running or paused ──▶ finished
/// ```
///
/// Each lifecycle event returns the ``Action`` the ``Transfer`` must take. `finished` is terminal
/// and is reached exactly once, which is what guarantees one completion per transfer: every path to
/// the delegate's completion goes through an event that returns ``Action/finish``.
///
/// A running transfer is in one ``Phase`` of its current attempt (the first request, a redirect's,
/// a resume's): waiting for the response head, delivering the body, skipping bytes already kept,
/// draining a body nobody wants before the next attempt, pausing, or aborting with an error. The
/// phase decides what each of curl's body callbacks does (``bodyArrived(count:)``) and what curl's
/// end of the attempt leads to (``attemptEnded(succeeded:)``); every attempt starts again at
/// ``Phase/awaitingHead``.
struct TransferStateMachine: Hashable {
    enum State: Hashable {
        /// Created; not started.
        case idle
        /// The easy handle is in the multi handle (or about to be).
        case running(Phase)
        /// Removed from the multi handle, body so far kept, waiting for resume or cancel.
        /// `wasDraining`: the attempt it paused was draining a response nobody wanted, so resuming
        /// sends that request again from the start.
        case paused(wasDraining: Bool)
        /// Completed, failed or cancelled. Terminal.
        case finished
    }

    /// Where the running attempt's response is.
    enum Phase: Hashable {
        /// Waiting for the final response head.
        case awaitingHead
        /// Body bytes go to the sink and the delegate.
        case delivering
        /// A full reply to a range request: drop this many leading bytes, already kept.
        case skipping(Int64)
        /// A response nobody wants (a redirect's, a distrusted range reply's): drop its body, then.
        case draining(then: AfterDrain)
        /// A pause asked for on the context: curl is held (`CURL_WRITEFUNC_PAUSE`) until the handle leaves.
        case pausing
        /// curl has been (or is being) told to stop; the transfer fails with this error, whatever
        /// curl reports.
        case aborting(TransferError)
    }

    /// What follows a drained response.
    enum AfterDrain: Hashable {
        /// Follow the redirect with this attempt.
        case redirect(Attempt)
        /// Send the same request again without a range.
        case retryWithoutRange
    }

    /// What the transfer does once a lifecycle event changed the state.
    enum Action: Hashable {
        /// Nothing to do: the event does not apply in this state.
        case none
        /// Put the transfer's easy handle into the multi handle.
        case activate
        /// Take the easy handle out of the multi handle and keep the body so far.
        case deactivate
        /// Release everything and call the completion, exactly once.
        case finish
    }

    /// What a response head, judged by the transfer, makes of the attempt.
    enum HeadPlan: Hashable {
        /// Deliver the body.
        case deliver
        /// Deliver the body after dropping this many leading bytes (kept already).
        case skip(Int64)
        /// Drain the body, then go on as said.
        case drain(then: AfterDrain)
        /// Stop the attempt with this error.
        case fail(TransferError)
    }

    /// What one of curl's body callbacks does with its bytes.
    enum BodyAction: Hashable {
        /// Keep and report the bytes from this offset of the chunk on (0: all of them).
        case deliver(from: Int)
        /// Take the bytes and drop them.
        case drop
        /// Hold curl (`CURL_WRITEFUNC_PAUSE`): the handle is about to leave the multi handle.
        case pause
        /// Abort: the transfer fails with the aborting phase's error.
        case abort
    }

    /// What the end of an attempt (curl's `CURLMSG_DONE`) leads to.
    enum AttemptOutcome: Hashable {
        /// Start this attempt (a redirect).
        case relaunch(Attempt)
        /// Start the same attempt again without a range, the body so far dropped.
        case retryWithoutRange
        /// The transfer succeeded.
        case succeed
        /// The transfer failed with this error, found by the transfer itself.
        case fail(TransferError)
        /// The transfer failed with curl's error.
        case failWithCurlError
    }

    private(set) var state: State = .idle

    /// Whether the transfer is running (in any phase).
    var isRunning: Bool {
        if case .running = self.state { return true }
        return false
    }

    /// The running attempt's phase, or `nil` when not running.
    var phase: Phase? {
        if case .running(let phase) = self.state { return phase }
        return nil
    }

    // MARK: Lifecycle

    /// `start()` was called. Only an idle transfer starts.
    mutating func start() -> Action {
        switch self.state {
        case .idle:
            self.state = .running(.awaitingHead)
            return .activate
        case .running, .paused, .finished:
            return .none
        }
    }

    /// `pause()` was called. Only a running transfer pauses.
    mutating func pause() -> Action {
        switch self.state {
        case .running(let phase):
            if case .draining = phase {
                self.state = .paused(wasDraining: true)
            } else {
                self.state = .paused(wasDraining: false)
            }
            return .deactivate
        case .idle, .paused, .finished:
            return .none
        }
    }

    /// `resume()` was called. Only a paused transfer resumes.
    mutating func resume() -> Action {
        switch self.state {
        case .paused:
            self.state = .running(.awaitingHead)
            return .activate
        case .idle, .running, .finished:
            return .none
        }
    }

    /// `cancel()` was called (or the engine shut down). Anything not finished finishes.
    mutating func cancel() -> Action {
        switch self.state {
        case .idle, .running, .paused:
            self.state = .finished
            return .finish
        case .finished:
            return .none
        }
    }

    /// The transfer completed (succeeded or failed): curl reported the attempt done, activating it
    /// failed, or its deadline passed. Only a running transfer completes.
    mutating func complete() -> Action {
        switch self.state {
        case .running:
            self.state = .finished
            return .finish
        case .idle, .paused, .finished:
            return .none
        }
    }

    // MARK: The running attempt

    /// A new attempt (a redirect, a retry without range) replaces the one that ended.
    mutating func attemptStarted() {
        if self.isRunning { self.state = .running(.awaitingHead) }
    }

    /// A cancel or pause was asked for on the context, where curl may be inside a callback: the next
    /// body callback acts on it before anything reaches the delegate. A cancel replaces a pause; an
    /// abort already under way keeps its error.
    mutating func haltRequested(cancellingWith error: TransferError?) {
        guard let phase = self.phase else { return }
        if case .aborting = phase { return }
        if let error {
            self.state = .running(.aborting(error))
        } else {
            self.state = .running(.pausing)
        }
    }

    /// Whether a cancel or pause asked for on the context (``haltRequested(cancellingWith:)``) waits
    /// to be carried out.
    var isHalting: Bool {
        switch self.phase {
        case .aborting, .pausing: true
        default: false
        }
    }

    /// Whether a response head is still wanted: not once the attempt is aborting.
    var wantsHead: Bool {
        guard let phase = self.phase else { return false }
        if case .aborting = phase { return false }
        return true
    }

    /// The response head arrived and the transfer judged it. Returns whether curl goes on (`false`
    /// aborts). A pausing attempt stays pausing.
    mutating func headArrived(_ plan: HeadPlan) -> Bool {
        guard let phase = self.phase else { return false }
        switch phase {
        case .aborting:
            return false
        case .pausing:
            if case .fail(let error) = plan {
                self.state = .running(.aborting(error))
                return false
            }
            return true
        case .awaitingHead, .delivering, .skipping, .draining:
            switch plan {
            case .deliver: self.state = .running(.delivering)
            case .skip(let count): self.state = .running(count > 0 ? .skipping(count) : .delivering)
            case .drain(let then): self.state = .running(.draining(then: then))
            case .fail(let error):
                self.state = .running(.aborting(error))
                return false
            }
            return true
        }
    }

    /// curl hands over `count` body bytes.
    mutating func bodyArrived(count: Int) -> BodyAction {
        guard let phase = self.phase else { return .abort }
        switch phase {
        case .awaitingHead, .delivering:
            return .deliver(from: 0)
        case .skipping(let remaining):
            if Int64(count) <= remaining {
                self.state = .running(Int64(count) == remaining ? .delivering : .skipping(remaining - Int64(count)))
                return .drop
            }
            self.state = .running(.delivering)
            return .deliver(from: Int(remaining))
        case .draining:
            return .drop
        case .pausing:
            return .pause
        case .aborting:
            return .abort
        }
    }

    /// A callback found a failure (body too large, a file that cannot be read or written): curl is
    /// told to stop and the transfer fails with `error`. The first error wins.
    mutating func failed(_ error: TransferError) {
        guard let phase = self.phase else { return }
        if case .aborting = phase { return }
        self.state = .running(.aborting(error))
    }

    /// Whether curl may read more request body (not once the attempt is aborting).
    var sendsBody: Bool {
        guard let phase = self.phase else { return false }
        if case .aborting = phase { return false }
        return true
    }

    /// The error the attempt is aborting with, if it is.
    var abortError: TransferError? {
        if case .running(.aborting(let error)) = self.state { return error }
        return nil
    }

    /// curl reported the attempt done; what follows. Changes no state: the transfer then calls
    /// ``attemptStarted()`` or ``complete()``.
    func attemptEnded(succeeded: Bool) -> AttemptOutcome {
        guard let phase = self.phase else { return .failWithCurlError }
        switch phase {
        case .aborting(let error):
            return .fail(error)
        case .draining(let then) where succeeded:
            switch then {
            case .redirect(let next): return .relaunch(next)
            case .retryWithoutRange: return .retryWithoutRange
            }
        case .awaitingHead, .delivering, .skipping, .draining, .pausing:
            return succeeded ? .succeed : .failWithCurlError
        }
    }
}
