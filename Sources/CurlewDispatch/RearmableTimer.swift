import Dispatch

/// curl's one timer as a single `DispatchSourceTimer`, created and activated once, then re-armed with
/// `schedule(deadline:leeway:)` for every request (`URLSession` allocates a new source per callback).
///
/// The requested deadline is kept beside the source, which gives ``DispatchScheduler`` the armed state
/// for its diagnostics and lets it drop a fire that no longer matches a request: a fire that was
/// already on its way when the timer was disarmed or re-armed for later. Confined to the scheduler's
/// queue, which is also the source's target.
final class RearmableTimer {
    private let source: any DispatchSourceTimer
    private let leeway: DispatchTimeInterval
    /// The deadline of the current request, `nil` when disarmed or after its fire was claimed.
    private(set) var deadline: DispatchTime?

    /// Longest delay representable in `DispatchTimeInterval` nanoseconds; beyond it is "never" anyway.
    private static let maximumMilliseconds = Int(Int64.max / 1_000_000)

    /// Creates and activates the timer, disarmed. `onFire` runs on `queue` for every fire of the
    /// source, including stale ones: it must call ``claimFire()``.
    init(queue: DispatchQueue, leeway: DispatchTimeInterval, onFire: @escaping () -> Void) {
        self.leeway = leeway
        self.source = DispatchSource.makeTimerSource(queue: queue)
        self.source.setEventHandler(handler: onFire)
        self.source.schedule(deadline: .distantFuture, leeway: leeway)
        self.source.activate()
    }

    /// Whether a fire is expected.
    var isArmed: Bool { self.deadline != nil }

    /// Fires once after `milliseconds` (0: as soon as the queue gets to it, never inside this call).
    func arm(afterMilliseconds milliseconds: Int) {
        let delay = min(max(milliseconds, 0), Self.maximumMilliseconds)
        let deadline = delay == 0 ? DispatchTime.now() : DispatchTime.now() + .milliseconds(delay)
        self.deadline = deadline
        self.source.schedule(deadline: deadline, leeway: self.leeway)
    }

    /// Stops the timer from firing until the next `arm`.
    func disarm() {
        guard self.deadline != nil else { return }
        self.deadline = nil
        self.source.schedule(deadline: .distantFuture, leeway: self.leeway)
    }

    /// Decides whether the source's fire answers the current request, and if so disarms.
    ///
    /// A fire with no request (disarmed) or before the requested deadline is stale and returns
    /// `false`. In the second case the source is scheduled for the deadline again, so the request
    /// still fires even if the stale fire consumed the one-shot timer.
    func claimFire() -> Bool {
        guard let deadline = self.deadline else { return false }
        guard DispatchTime.now() >= deadline else {
            self.source.schedule(deadline: deadline, leeway: self.leeway)
            return false
        }
        self.deadline = nil
        return true
    }

    /// Cancels the source for good (shutdown).
    func cancel() {
        self.deadline = nil
        self.source.cancel()
    }
}
