/// The accounts of a ``RetryBudget``, as a value with no I/O: the first attempts and the retries of
/// the last window, and whether one more retry fits. Tests pass the clock in.
///
/// The window is cut into ``sliceCount`` slices of equal length, kept in a ring: a slice older than
/// the window is reused, its counts forgotten, so the ledger's size never grows and each decision
/// reads a fixed number of counts. A count therefore ages out between `window × 9/10` and `window`
/// after it was made.
struct RetryBudgetLedger: Hashable {
    /// How many slices the window is cut into.
    static let sliceCount = 10

    /// The counts of one slice of time.
    private struct Slice: Hashable {
        /// Which slice of time since ``origin`` it holds (`-1`: none yet).
        var index: Int64 = -1
        var firstAttempts = 0
        var retries = 0
    }

    /// Retries allowed per first attempt (0.2: one retry per five requests).
    let retryRatio: Double
    /// Retries allowed in any window whatever the traffic.
    let minimumRetries: Int
    /// The length of one slice, in nanoseconds (at least 1).
    let sliceNanoseconds: Int64
    /// Where slice 0 starts.
    let origin: ContinuousClock.Instant
    private var slices = [Slice](repeating: Slice(), count: RetryBudgetLedger.sliceCount)

    /// A ledger with nothing recorded. A ratio below zero (or not a number) allows no retry beyond
    /// the minimum; a negative minimum is zero; a window shorter than ``sliceCount`` nanoseconds is
    /// that long.
    init(retryRatio: Double, minimumRetries: Int, window: Duration, now: ContinuousClock.Instant) {
        self.retryRatio = retryRatio.isFinite ? max(retryRatio, 0) : 0
        self.minimumRetries = max(minimumRetries, 0)
        self.sliceNanoseconds = max(Self.nanoseconds(window) / Int64(Self.sliceCount), 1)
        self.origin = now
    }

    /// Counts a request's first attempt: it allows ``retryRatio`` retries for a window.
    mutating func recordFirstAttempt(at now: ContinuousClock.Instant) {
        let position = self.position(at: now)
        self.slices[position].firstAttempts += 1
    }

    /// Whether one more retry fits the budget now; if it does, it is counted.
    ///
    /// It fits when the retries of the window, this one included, are at most ``minimumRetries``
    /// plus ``retryRatio`` times the first attempts of the window.
    mutating func withdrawRetry(at now: ContinuousClock.Instant) -> Bool {
        let position = self.position(at: now)
        var firstAttempts = 0
        var retries = 0
        for slice in self.slices {
            firstAttempts += slice.firstAttempts
            retries += slice.retries
        }
        guard Double(retries + 1) <= Double(self.minimumRetries) + self.retryRatio * Double(firstAttempts) else {
            return false
        }
        self.slices[position].retries += 1
        return true
    }

    /// The ring position of the slice holding `now`, with every slice older than the window emptied.
    private mutating func position(at now: ContinuousClock.Instant) -> Int {
        let current = (now < self.origin ? 0 : Self.nanoseconds(now - self.origin)) / self.sliceNanoseconds
        for position in self.slices.indices where self.slices[position].index <= current - Int64(Self.sliceCount) {
            self.slices[position] = Slice()
        }
        let position = Int(current % Int64(Self.sliceCount))
        if self.slices[position].index != current {
            self.slices[position] = Slice(index: current)
        }
        return position
    }

    /// `duration` in whole nanoseconds, `Int64.max` beyond (292 years), 0 below zero.
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let (total, overflowing) = nanoseconds.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowing ? .max : total
    }
}
