import Testing
@testable import CurlewTransport

/// The retry budget's decision as a value: the clock is passed in, nothing waits.
@Suite("Retry budget ledger")
struct RetryBudgetLedgerTests {
    private let start = ContinuousClock.now

    private func ledger(ratio: Double = 0.2, minimum: Int = 10, window: Duration = .seconds(10)) -> RetryBudgetLedger {
        RetryBudgetLedger(retryRatio: ratio, minimumRetries: minimum, window: window, now: self.start)
    }

    /// Withdraws until refused; returns how many retries were allowed (at most `limit`).
    private func drain(_ ledger: inout RetryBudgetLedger, at now: ContinuousClock.Instant, limit: Int = 100_000) -> Int {
        var allowed = 0
        while allowed < limit, ledger.withdrawRetry(at: now) { allowed += 1 }
        return allowed
    }

    @Test("with no traffic, the minimum is allowed and no more")
    func minimumOnly() {
        var ledger = self.ledger()
        #expect(self.drain(&ledger, at: self.start) == 10)
        let later = ledger.withdrawRetry(at: self.start + .seconds(5))
        #expect(!later)
    }

    @Test("the storm: 500 first attempts allow 20 % of them plus the minimum, whatever the order")
    func storm() {
        var upFront = self.ledger()
        for _ in 0..<500 { upFront.recordFirstAttempt(at: self.start) }
        #expect(self.drain(&upFront, at: self.start) == 110)

        // Interleaved as in a real storm: each request fails, asks for up to two retries.
        var interleaved = self.ledger()
        var attempts = 0
        for request in 0..<500 {
            let now = self.start + .milliseconds(request)
            interleaved.recordFirstAttempt(at: now)
            attempts += 1
            for _ in 0..<2 where interleaved.withdrawRetry(at: now) { attempts += 1 }
        }
        #expect(attempts <= 500 * 12 / 10 + 10, "\(attempts) attempts")
        #expect(attempts >= 600, "the budget allowed fewer retries than its share: \(attempts)")
    }

    @Test("first attempts and retries age out after the window; the budget is whole again")
    func window() {
        var ledger = self.ledger()
        for _ in 0..<100 { ledger.recordFirstAttempt(at: self.start) }
        #expect(self.drain(&ledger, at: self.start) == 30)
        let insideWindow = ledger.withdrawRetry(at: self.start + .seconds(8))
        #expect(!insideWindow, "spent retries came back inside the window")
        #expect(self.drain(&ledger, at: self.start + .seconds(10)) == 10, "after the window only the minimum is left")
        for _ in 0..<50 { ledger.recordFirstAttempt(at: self.start + .seconds(11)) }
        #expect(self.drain(&ledger, at: self.start + .seconds(15)) == 10, "50 recent first attempts allow 10 more")
    }

    @Test("a ratio of zero allows only the minimum; a minimum of zero needs traffic")
    func edges() {
        var noRatio = self.ledger(ratio: 0)
        for _ in 0..<1_000 { noRatio.recordFirstAttempt(at: self.start) }
        #expect(self.drain(&noRatio, at: self.start) == 10)

        var noMinimum = self.ledger(minimum: 0)
        let withoutTraffic = noMinimum.withdrawRetry(at: self.start)
        #expect(!withoutTraffic)
        for _ in 0..<5 { noMinimum.recordFirstAttempt(at: self.start) }
        #expect(self.drain(&noMinimum, at: self.start) == 1)
    }

    @Test("nonsense settings are clamped, never a trap", arguments: [-1.0, .nan, .infinity, -.infinity])
    func clamped(_ ratio: Double) {
        var ledger = RetryBudgetLedger(retryRatio: ratio, minimumRetries: -5, window: .zero, now: self.start)
        ledger.recordFirstAttempt(at: self.start)
        #expect(ledger.retryRatio == 0 && ledger.minimumRetries == 0)
        let clampedRetry = ledger.withdrawRetry(at: self.start + .seconds(1))
        #expect(!clampedRetry)
        var huge = RetryBudgetLedger(retryRatio: 1, minimumRetries: .max, window: .seconds(Int64.max), now: self.start)
        let early = huge.withdrawRetry(at: self.start - .seconds(1))
        #expect(early, "an instant before the origin counts as the origin")
    }
}
