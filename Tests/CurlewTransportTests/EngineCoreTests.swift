import Testing
@testable import CurlewTransport

extension EngineCore {
    /// A core on fake descriptors, with `configure` applied to the default configuration.
    static func testing(_ descriptors: FakeDescriptors = FakeDescriptors(),
                        _ configure: (inout TransferEngine.Configuration) -> Void = { _ in }) -> EngineCore {
        var configuration = TransferEngine.Configuration()
        configure(&configuration)
        return EngineCore(configuration: configuration, system: descriptors.system)
    }

    /// Every action the current visit still takes, at `now`, as the driver would pull them; `curl`
    /// plays curl's part after each action (the requests it makes from inside that call).
    mutating func finishVisit(at now: ContinuousClock.Instant,
                              curl: (inout EngineCore, Action) -> Void = { _, _ in }) -> [Action] {
        var actions: [Action] = []
        while let action = self.nextVisitAction(at: now) {
            actions.append(action)
            curl(&self, action)
            if actions.count > 1_000 { break }
        }
        return actions
    }
}

@Suite("Engine core: visits and the timer")
struct EngineCoreTests {
    let now = ContinuousClock.now

    @Test("curl's timer requests wait for the end of the visit; outside one they set the timer at once")
    func timerRequestsWaitForTheVisit() {
        var core = EngineCore.testing()
        let outside = core.curlWantsTimer(.after(milliseconds: 500), handle: 0, at: self.now)
        #expect(outside == .setTimer(milliseconds: 500))

        let got1 = core.visitBegins()
        #expect(got1)
        let inside1 = core.curlWantsTimer(.after(milliseconds: 50), handle: 0, at: self.now)
        let inside2 = core.curlWantsTimer(.after(milliseconds: 20), handle: 0, at: self.now)
        #expect(inside1 == .none && inside2 == .none, "held back until curl has returned")
        let ending = core.finishVisit(at: self.now)
        #expect(ending == [.setTimer(milliseconds: 20)], "only curl's last request matters, applied once")
        #expect(core.visit == .outside)
        let diagnostics = core.diagnostics(liveTransfers: 0, idleEasyHandles: 0, scheduler: SchedulerDiagnostics())
        #expect(diagnostics.timerUpdates == 3 && diagnostics.timerChanges == 2)
    }

    @Test("a 0 ms request runs curl's due timeouts in the same visit, never as a timer for now")
    func immediateRequestRunsInTheVisit() {
        var core = EngineCore.testing()
        let got2 = core.visitBegins()
        #expect(got2)
        _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)  // a transfer was added
        let actions = core.finishVisit(at: self.now) { core, action in
            // Running its timeouts, curl starts the transfer and wants its connect deadline.
            if action == .runDueTimeouts(handle: 0) {
                _ = core.curlWantsTimer(.after(milliseconds: 60_000), handle: 0, at: self.now)
            }
        }
        #expect(actions == [.runDueTimeouts(handle: 0), .setTimer(milliseconds: 60_000)])
        let diagnostics = core.diagnostics(liveTransfers: 0, idleEasyHandles: 0, scheduler: SchedulerDiagnostics())
        #expect(diagnostics.timerArmsForNow == 0)
    }

    @Test("a visit runs at most 8 rounds per multi handle, then arms the timer for now")
    func roundsAreBounded() {
        var core = EngineCore.testing()
        let got3 = core.visitBegins()
        #expect(got3)
        _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
        let actions = core.finishVisit(at: self.now) { core, action in
            if case .runDueTimeouts = action {
                _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)  // "again, at once"
            }
        }
        #expect(actions == Array(repeating: .runDueTimeouts(handle: 0), count: EngineCore.roundsPerHandle)
            + [.setTimer(milliseconds: 0)])
        let diagnostics = core.diagnostics(liveTransfers: 0, idleEasyHandles: 0, scheduler: SchedulerDiagnostics())
        #expect(diagnostics.timerArmsForNow == 1)
    }

    @Test("a visit begun inside another joins it")
    func nestedVisitJoins() {
        var core = EngineCore.testing()
        let got4 = core.visitBegins()
        #expect(got4)
        let got5 = core.visitBegins()
        #expect(!got5, "joined: the outer visit ends it")
        #expect(core.visit == .body)
        _ = core.finishVisit(at: self.now)
        let got6 = core.visitBegins()
        #expect(got6, "over: the next one begins")
    }

    @Test("a transfer started from another thread leaves curl's due timeouts until after the events in hand")
    func startsFromElsewhereWait() {
        var core = EngineCore.testing()
        // Two starts from other threads, one visit each, in the same batch of events.
        for _ in 0..<2 {
            let got7 = core.visitBegins()
            #expect(got7)
            _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
            core.startedFromElsewhere()
            let actions = core.finishVisit(at: self.now)
            #expect(!actions.contains(.runDueTimeouts(handle: 0)), "the request does not leave yet")
            #expect(!actions.contains(.setTimer(milliseconds: 0)), "nor is a timer armed for now")
            _ = actions
        }
        var queued = core.takeWorkAfterEvents()
        #expect(queued.count == 1, "one visit for both starts")
        guard case .dueTimeouts = queued.first else {
            Issue.record("expected the deferred timeouts, got \(queued)")
            return
        }
        core.workAfterEventsRan(&queued)
        let got8 = core.visitOfDueLaterBegins()
        #expect(got8)
        let later = core.finishVisit(at: self.now)
        #expect(later == [.runDueTimeouts(handle: 0)], "both requests leave in one round")
        let got9 = core.visitOfDueLaterBegins()
        #expect(!got9, "nothing left for later")
    }

    @Test("only the first start of a batch queues the visit that runs the deferred timeouts")
    func deferredTimeoutsQueueOnePerform() {
        var core = EngineCore.testing()
        let got10 = core.visitBegins()
        #expect(got10)
        _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
        core.startedFromElsewhere()
        let got11 = core.nextVisitAction(at: self.now)
        #expect(got11 == .performAfterEvents)
        _ = core.finishVisit(at: self.now)
        let got12 = core.visitBegins()
        #expect(got12)
        _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
        core.startedFromElsewhere()
        let got13 = core.finishVisit(at: self.now)
        #expect(!got13.contains(.performAfterEvents), "already queued")
    }

    @Test("a start on the context (no deferral) keeps the immediate round")
    func startsOnTheContextRunAtOnce() {
        var core = EngineCore.testing()
        let got14 = core.visitBegins()
        #expect(got14)
        _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
        let got15 = core.finishVisit(at: self.now)
        #expect(got15 == [.runDueTimeouts(handle: 0)])
        let got16 = core.takeWorkAfterEvents()
        #expect(got16.isEmpty)
    }

    @Test("the visit of the deferred timeouts runs curl's further requests itself")
    func deferredVisitDoesNotDeferAgain() {
        var core = EngineCore.testing()
        let got17 = core.visitBegins()
        #expect(got17)
        _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
        core.startedFromElsewhere()
        _ = core.finishVisit(at: self.now)
        let got18 = core.visitOfDueLaterBegins()
        #expect(got18)
        let actions = core.finishVisit(at: self.now) { core, action in
            if action == .runDueTimeouts(handle: 0), core.visit == .dueLater(next: 1) {
                _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
            }
        }
        #expect(actions == [.runDueTimeouts(handle: 0), .runDueTimeouts(handle: 0)])
    }

    @Test("the timer is re-armed only for an earlier deadline; one that fired early runs every handle's timeouts")
    func lazyTimer() {
        var core = EngineCore.testing()
        let got19 = core.curlWantsTimer(.after(milliseconds: 1_000), handle: 0, at: self.now)
        #expect(got19 == .setTimer(milliseconds: 1_000))
        let got20 = core.curlWantsTimer(.after(milliseconds: 5_000), handle: 0, at: self.now)
        #expect(got20 == .none, "later: left armed")
        let got21 = core.curlWantsTimer(.disarm, handle: 0, at: self.now)
        #expect(got21 == .none, "left to fire once, harmlessly")
        let got22 = core.curlWantsTimer(.after(milliseconds: 10), handle: 0, at: self.now)
        #expect(got22 == .setTimer(milliseconds: 10))
        let got23 = core.curlWantsTimer(.disarm, handle: 0, at: self.now)
        #expect(got23 == .none)
        let early = core.timerFired(at: self.now + .milliseconds(10))
        #expect(early == .runEveryHandlesDueTimeouts, "curl's deadline was disarmed: nothing is due")
        _ = core.curlWantsTimer(.after(milliseconds: 50), handle: 0, at: self.now)
        let got24 = core.timerFired(at: self.now + .milliseconds(50))
        #expect(got24 == .runDueTimeouts(handle: 0))
    }

    @Test("a transfer past its own deadline is timed out when the visit ends, and the timer serves the earlier deadline")
    func ownDeadlines() {
        var core = EngineCore.testing()
        core.track(self.now + .seconds(2), for: 7)
        core.track(self.now + .seconds(5), for: 8)
        let armed = core.curlWantsTimer(.after(milliseconds: 60_000), handle: 0, at: self.now)
        #expect(armed == .setTimer(milliseconds: 2_000), "the transfer's deadline, not curl's")

        let later = self.now + .seconds(3)
        let got25 = core.timerFired(at: later)
        #expect(got25 == .runEveryHandlesDueTimeouts)
        let got26 = core.visitBegins()
        #expect(got26)
        let actions = core.finishVisit(at: later)
        #expect(actions == [.expire(transferID: 7), .setTimer(milliseconds: 2_000)])
        #expect(core.expiringDeadline == nil, "cleared once no deadline is due")
        core.track(later + .seconds(1), for: 9)
        let got29 = core.visitBegins()
        #expect(got29)
        let expired = core.nextVisitAction(at: later + .seconds(1))
        #expect(expired == .expire(transferID: 9) && core.expiringDeadline == later + .seconds(1),
                "the transfer is timed out only if its deadline is still this one")
    }

    @Test("stale deadlines are dropped once they outnumber the live transfers")
    func staleDeadlinesAreDropped() {
        var core = EngineCore.testing()
        for id in 0..<100 as Range<UInt64> { core.track(self.now + .seconds(60), for: id) }
        core.transferEnded(counted: true, liveTransfers: 50) { _ in false }
        #expect(core.trackedDeadlineCount == 100, "not yet: 100 ≤ 2 × 50 + 64")
        core.transferEnded(counted: true, liveTransfers: 10) { $0.transferID < 5 }
        #expect(core.trackedDeadlineCount == 5)
        let diagnostics = core.diagnostics(liveTransfers: 10, idleEasyHandles: 0, scheduler: SchedulerDiagnostics())
        #expect(diagnostics.transfersCompleted == 2 && diagnostics.liveTransfers == 10)
    }

    @Test("after shutdown no timeout runs and the timer is left alone")
    func shutdownStopsTheVisit() {
        var core = EngineCore.testing()
        let got27 = core.visitBegins()
        #expect(got27)
        _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
        core.shutDown()
        let got28 = core.finishVisit(at: self.now)
        #expect(got28.isEmpty)
        let got29 = core.curlWantsTimer(.after(milliseconds: 10), handle: 0, at: self.now)
        #expect(got29 == .none)
    }

    /// Every state a visit can be in, reached through the core's own events.
    static let visitStates: [EngineCore.Visit] = [.outside, .body, .dueLater(next: 0), .rounds(done: 1), .deadlines]

    private func core(in state: EngineCore.Visit) -> EngineCore {
        var core = EngineCore.testing()
        switch state {
        case .outside:
            break
        case .body:
            _ = core.visitBegins()
        case .dueLater:
            _ = core.visitBegins()
            _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
            core.startedFromElsewhere()
            _ = core.finishVisit(at: self.now)
            var queued = core.takeWorkAfterEvents()
            core.workAfterEventsRan(&queued)
            _ = core.visitOfDueLaterBegins()
        case .rounds:
            _ = core.visitBegins()
            _ = core.curlWantsTimer(.after(milliseconds: 0), handle: 0, at: self.now)
            _ = core.nextVisitAction(at: self.now)
        case .deadlines:
            core.track(self.now, for: 1)
            core.track(self.now, for: 2)
            _ = core.visitBegins()
            _ = core.nextVisitAction(at: self.now)
        }
        return core
    }

    @Test("every event in every state of a visit", arguments: visitStates)
    func everyEventInEveryState(_ state: EngineCore.Visit) {
        #expect(self.core(in: state).visit == state, "the state is reached")
        var begins = self.core(in: state)
        let got30 = begins.visitBegins()
        #expect(got30 == (state == .outside), "a visit begins only outside one")
        var timer = self.core(in: state)
        let request = timer.curlWantsTimer(.after(milliseconds: 30_000), handle: 0, at: self.now)
        #expect((request == .setTimer(milliseconds: 30_000)) == (state == .outside), "the timer waits for the visit")
        var deferred = self.core(in: state)
        let got31 = deferred.visitOfDueLaterBegins()
        #expect(!got31, "no deferred visit inside a visit, nor without timeouts left")
        var work = self.core(in: state)
        let got32 = work.runAfterEvents({})
        #expect(got32 == .performAfterEvents, "the first work queued asks for a perform")
        let got33 = work.runAfterEvents({})
        #expect(got33 == .none)
        var slots = self.core(in: state)
        let host = ConnectionAdmission.Host(scheme: "http", authority: "a.test")
        let got34 = slots.transferWantsSlot(1, on: host, multiplexes: false)
        #expect(got34, "slots do not depend on the visit")
        var fired = self.core(in: state)
        let firing = fired.timerFired(at: self.now)
        #expect(firing == .runEveryHandlesDueTimeouts || firing == .runDueTimeouts(handle: 0))
        var ending = self.core(in: state)
        let actions = ending.finishVisit(at: self.now)
        #expect(ending.visit == .outside, "every visit ends, \(actions)")
        let got35 = ending.nextVisitAction(at: self.now)
        #expect(got35 == nil)
    }

    @Test("work queued behind the events in hand runs in order, with one perform per batch")
    func workAfterEvents() {
        var core = EngineCore.testing()
        let order = Recorder()
        #expect(core.runAfterEvents { order.note(1) } == .performAfterEvents)
        #expect(core.runAfterEvents { order.note(2) } == .none)
        var queued = core.takeWorkAfterEvents()
        #expect(core.runAfterEvents { order.note(3) } == .performAfterEvents, "queued while a batch runs: its own perform")
        for item in queued { if case .work(let work) = item { work() } }
        core.workAfterEventsRan(&queued)
        #expect(queued.isEmpty)
        var next = core.takeWorkAfterEvents()
        for item in next { if case .work(let work) = item { work() } }
        core.workAfterEventsRan(&next)
        #expect(order.values == [1, 2, 3])
    }
}

/// Records values from `@Sendable` closures (tests run them on one thread).
final class Recorder: @unchecked Sendable {  // confined to the test's thread
    private(set) var values: [Int] = []
    func note(_ value: Int) { self.values.append(value) }
}
