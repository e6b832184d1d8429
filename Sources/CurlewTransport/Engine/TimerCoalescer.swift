/// When the scheduler's one timer must fire: curl's deadline (`CURLMOPT_TIMERFUNCTION`) and the
/// transfers' own total-timeout deadlines, coalesced into as few re-arms as possible. A value with
/// no I/O: the clock is passed in.
///
/// **Lazily.** curl moves its deadline all the time, mostly *later* (every new request brings a
/// fresh connect or idle timeout), and re-arming costs a system call in both backends. So the timer
/// is re-armed only when the wanted deadline is *earlier* than the one it is armed for. A timer that
/// fires early just leads to a `curl_multi_socket_action` with nothing due, after which the timer is
/// armed again for curl's real deadline (curl itself would not say it again: it repeats no unchanged
/// deadline). When curl wants no timer, the armed one is left to fire once, harmlessly. Measured:
/// 20,000 small GETs at 16 in flight made 43 `timerfd_settime` calls instead of about 52,000.
///
/// **Not from inside curl.** curl asks for 0 ms whenever a transfer is added ("call
/// `curl_multi_socket_action` soon, but not from inside my callback"). The driver's entry does that
/// itself when curl has returned (``takeDueCurlDeadline(at:)``), so a new transfer starts in the same
/// visit of the context (or in one the driver queues behind the events in hand, for some starts)
/// instead of a round trip through the scheduler's timer.
///
/// **The transfers' own deadlines.** libcurl checks a transfer's total timeout only while the
/// transfer has a connection; one waiting in curl's pending list is never timed out there. The
/// engine keeps every such deadline here (``track(_:for:)``) and completes a transfer still running
/// when its deadline comes (``popDueDeadline(at:)``). Entries are never removed early: a transfer that
/// finished, paused or moved its deadline no longer matches its entry, which the driver skips.
///
/// **One deadline per multi handle.** An engine may drive several multi handles (see
/// ``MultiHandlePlacement``); each asks for its own timer, and the scheduler's one timer serves the
/// earliest.
struct TimerCoalescer {
    /// The deadline each multi handle's curl last asked for (`nil`: none), by handle.
    private var curlDeadlines: [ContinuousClock.Instant?] = [nil]
    /// The deadline the scheduler's timer is armed for (`nil`: not armed, or already fired).
    private(set) var armedDeadline: ContinuousClock.Instant?
    private var deadlines = DeadlineQueue()

    // MARK: curl's deadline

    /// The earliest deadline any multi handle's curl asked for (`nil`: none).
    var curlDeadline: ContinuousClock.Instant? {
        if self.curlDeadlines.count == 1 { return self.curlDeadlines[0] }
        return self.curlDeadlines.lazy.compactMap { $0 }.min()
    }

    /// The curl of multi handle `handle` asked for its timer (`CURLMOPT_TIMERFUNCTION`) at `now`.
    mutating func curlAsked(_ request: TimerRequest, handle: Int = 0, at now: ContinuousClock.Instant) {
        while handle >= self.curlDeadlines.count { self.curlDeadlines.append(nil) }
        switch request {
        case .disarm: self.curlDeadlines[handle] = nil
        case .after(let milliseconds): self.curlDeadlines[handle] = now + .milliseconds(milliseconds)
        }
    }

    /// The first multi handle whose curl deadline has come by `now`, its deadline cleared: the
    /// caller runs that handle's due timeouts now. `nil` when none is due.
    mutating func takeDueCurlHandle(at now: ContinuousClock.Instant) -> Int? {
        for handle in self.curlDeadlines.indices {
            if let wanted = self.curlDeadlines[handle], wanted <= now {
                self.curlDeadlines[handle] = nil
                return handle
            }
        }
        return nil
    }

    /// Whether some curl deadline has come by `now`; if so the first due one is cleared (an engine of
    /// one multi handle).
    mutating func takeDueCurlDeadline(at now: ContinuousClock.Instant) -> Bool {
        self.takeDueCurlHandle(at: now) != nil
    }

    /// The scheduler's timer fired: it is no longer armed.
    mutating func timerFired() {
        self.armedDeadline = nil
    }

    /// What the scheduler's timer must be armed for at the end of an entry: milliseconds from `now`
    /// (0: as soon as possible), or `nil` to leave it as it is.
    mutating func rearm(at now: ContinuousClock.Instant) -> Int? {
        let wanted: ContinuousClock.Instant
        switch (self.curlDeadline, self.deadlines.earliest) {
        case (let curl?, let own?): wanted = min(curl, own)
        case (let curl?, nil): wanted = curl
        case (nil, let own?): wanted = own
        case (nil, nil): return nil
        }
        if let armed = self.armedDeadline, armed <= wanted { return nil }
        self.armedDeadline = wanted
        return wanted <= now ? 0 : Transfer.milliseconds(wanted - now)
    }

    // MARK: The transfers' own deadlines

    /// Remembers that transfer `id` must be timed out at `deadline` unless it finished by then.
    mutating func track(_ deadline: ContinuousClock.Instant, for id: UInt64) {
        self.deadlines.insert(deadline, for: id)
    }

    /// Whether some tracked deadline has come by `now`.
    func hasDueDeadline(at now: ContinuousClock.Instant) -> Bool {
        self.deadlines.earliest.map { $0 <= now } ?? false
    }

    /// Removes and returns the earliest tracked deadline that has come by `now`.
    mutating func popDueDeadline(at now: ContinuousClock.Instant) -> DeadlineQueue.Entry? {
        self.deadlines.popDue(at: now)
    }

    /// Drops the entries that no longer match a running transfer once they outnumber the live
    /// transfers, so a busy engine's queue stays small (amortized: each compaction halves it at least).
    mutating func dropStaleDeadlines(liveTransfers: Int, isCurrent: (DeadlineQueue.Entry) -> Bool) {
        guard self.deadlines.count > 2 * liveTransfers + 64 else { return }
        self.deadlines.compact(keeping: isCurrent)
    }

    /// Tracked entries, current or stale.
    var trackedDeadlineCount: Int { self.deadlines.count }
}
