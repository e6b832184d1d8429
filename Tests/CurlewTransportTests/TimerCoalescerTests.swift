import Testing
@testable import CurlewTransport

@Suite("Timer coalescer")
struct TimerCoalescerTests {
    @Test("curl's 0 ms request is run by the entry, not armed")
    func immediateRequest() {
        let now = ContinuousClock.now
        var timer = TimerCoalescer()
        timer.curlAsked(.after(milliseconds: 0), at: now)
        let got1 = timer.takeDueCurlDeadline(at: now)
        #expect(got1)
        let got2 = timer.takeDueCurlDeadline(at: now)
        #expect(!got2, "taken once")
        let got3 = timer.rearm(at: now)
        #expect(got3 == nil, "nothing left to arm")
    }

    @Test("re-armed only when wanted earlier than armed")
    func lazyRearm() {
        let now = ContinuousClock.now
        var timer = TimerCoalescer()
        timer.curlAsked(.after(milliseconds: 1_000), at: now)
        let got4 = timer.rearm(at: now)
        #expect(got4 == 1_000)
        timer.curlAsked(.after(milliseconds: 60_000), at: now)
        let got5 = timer.rearm(at: now)
        #expect(got5 == nil, "later: the armed timer fires early, harmlessly")
        timer.curlAsked(.disarm, at: now)
        let got6 = timer.rearm(at: now)
        #expect(got6 == nil, "disarm: the armed timer is left to fire once")
        timer.curlAsked(.after(milliseconds: 10), at: now)
        let got7 = timer.rearm(at: now)
        #expect(got7 == 10, "earlier: re-armed")
        timer.timerFired()
        timer.curlAsked(.after(milliseconds: 60_000), at: now)
        let got8 = timer.rearm(at: now)
        #expect(got8 == 60_000, "after a fire it is armed again for curl's deadline")
    }

    /// The pattern behind "43 re-arms instead of about 52,000": curl asks for its timer three times per
    /// request — 0 ms when the transfer is added, then a connect and an idle deadline, both later than
    /// what is armed. 20,000 requests at 16 in flight, 50 µs apart.
    @Test("20,000 requests move the scheduler's timer a handful of times")
    func requestStorm() {
        var now = ContinuousClock.now
        var timer = TimerCoalescer()
        var updates = 0, rearms = 0, firings = 0
        for _ in 0..<20_000 {
            now += .microseconds(50)
            if let armed = timer.armedDeadline, armed <= now {
                timer.timerFired()
                firings += 1
                _ = timer.takeDueCurlDeadline(at: now)
            }
            // One entry: the transfer is added, curl runs at once, then wants its deadlines.
            timer.curlAsked(.after(milliseconds: 0), at: now)
            _ = timer.takeDueCurlDeadline(at: now)
            timer.curlAsked(.after(milliseconds: 60_000), at: now)
            timer.curlAsked(.after(milliseconds: 1_000), at: now)
            updates += 3
            if timer.rearm(at: now) != nil { rearms += 1 }
        }
        #expect(updates == 60_000)
        #expect(rearms < 10, "the timer was re-armed \(rearms) times for \(updates) requests from curl")
        #expect(firings < 10)
    }

    @Test("a transfer's own deadline arms the timer and comes due")
    func ownDeadline() throws {
        let now = ContinuousClock.now
        var timer = TimerCoalescer()
        timer.track(now + .milliseconds(500), for: 7)
        let got9 = timer.rearm(at: now)
        #expect(got9 == 500)
        timer.curlAsked(.after(milliseconds: 100), at: now)
        let got10 = timer.rearm(at: now)
        #expect(got10 == 100, "the earlier of curl's and the transfer's")
        #expect(!timer.hasDueDeadline(at: now + .milliseconds(499)))
        let got11 = timer.popDueDeadline(at: now + .milliseconds(499))
        #expect(got11 == nil)
        #expect(timer.hasDueDeadline(at: now + .milliseconds(500)))
        let due = timer.popDueDeadline(at: now + .milliseconds(500))
        let entry = try #require(due)
        #expect(entry.transferID == 7)
    }

    @Test("stale deadlines are dropped once they outnumber the live transfers")
    func staleDeadlines() {
        let now = ContinuousClock.now
        var timer = TimerCoalescer()
        for id in 0..<100 { timer.track(now + .seconds(30), for: UInt64(id)) }
        timer.dropStaleDeadlines(liveTransfers: 50) { _ in true }
        #expect(timer.trackedDeadlineCount == 100, "not yet: 100 ≤ 2 × 50 + 64")
        timer.dropStaleDeadlines(liveTransfers: 10) { $0.transferID < 10 }
        #expect(timer.trackedDeadlineCount == 10)
    }
}

@Suite("Timer coalescer: several multi handles")
struct TimerCoalescerHandleTests {
    @Test("the timer is armed for the earliest handle's deadline, and each due handle is taken once")
    func earliestOfHandles() {
        let now = ContinuousClock.now
        var timer = TimerCoalescer()
        timer.curlAsked(.after(milliseconds: 500), handle: 0, at: now)
        timer.curlAsked(.after(milliseconds: 100), handle: 2, at: now)
        let armed = timer.rearm(at: now)
        #expect(armed == 100)
        let later = now + .milliseconds(200)
        let first = timer.takeDueCurlHandle(at: later)
        #expect(first == 2)
        let none = timer.takeDueCurlHandle(at: later)
        #expect(none == nil, "handle 0 is not due yet")
        timer.curlAsked(.after(milliseconds: 0), handle: 1, at: later)
        let second = timer.takeDueCurlHandle(at: later)
        #expect(second == 1)
        let all = timer.takeDueCurlHandle(at: now + .seconds(1))
        #expect(all == 0)
        #expect(timer.curlDeadline == nil)
    }
}
