/// The life of one transfer, as a value with no I/O.
///
/// ```
///   idle ──start──▶ running ──curl finished / failed──▶ finished
///                   │    ▲
///             pause │    │ resume
///                   ▼    │
///                   paused
///   cancel: idle, running or paused ──▶ finished
/// ```
///
/// Each event returns the action the ``Transfer`` must take. `finished` is terminal and is reached
/// exactly once, which is what guarantees one completion per transfer: every path to the delegate's
/// completion goes through an event that returns ``Action/finish``.
struct TransferStateMachine: Hashable {
    enum State: Hashable {
        /// Created; not started.
        case idle
        /// The easy handle is in the multi handle (or about to be).
        case running
        /// Removed from the multi handle, body so far kept, waiting for resume or cancel.
        case paused
        /// Completed, failed or cancelled. Terminal.
        case finished
    }

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

    private(set) var state: State = .idle

    /// `start()` was called. Only an idle transfer starts.
    mutating func start() -> Action {
        switch self.state {
        case .idle:
            self.state = .running
            return .activate
        case .running, .paused, .finished:
            return .none
        }
    }

    /// `pause()` was called. Only a running transfer pauses.
    mutating func pause() -> Action {
        switch self.state {
        case .running:
            self.state = .paused
            return .deactivate
        case .idle, .paused, .finished:
            return .none
        }
    }

    /// `resume()` was called. Only a paused transfer resumes.
    mutating func resume() -> Action {
        switch self.state {
        case .paused:
            self.state = .running
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

    /// curl reported the running attempt done (success or failure), or activating it failed.
    mutating func complete() -> Action {
        switch self.state {
        case .running:
            self.state = .finished
            return .finish
        case .idle, .paused, .finished:
            return .none
        }
    }
}
