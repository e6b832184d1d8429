import Dispatch
import Foundation
import Synchronization

/// The library's shared processing queues, and which one serializes the next response.
///
/// **Serial queues, not one concurrent queue**, because of how libdispatch schedules them on Linux:
/// a concurrent queue runs on the global pool, which has about two threads per CPU and adds more
/// only slowly, or not at all, when they block; a serial queue made with no target is
/// "overcommit" and always gets a thread. Measured on a 2-CPU machine: with 2 to 4 blocks waiting
/// on the pool, a new block on another concurrent queue waited 0.8–1.8 s, with 8 it never ran in
/// 5 s; a serial queue's ran within milliseconds every time. Programs do block pool threads — a
/// `BlockOperation` that waits for a request's result is the classic — and then, with a concurrent
/// processing queue, the requests they wait for could never finish. Here finishing an operation
/// (serializing, `isFinished`, waking waiters) never needs a pool thread.
///
/// **One queue takes responses until it is stuck.** Each response goes to the first queue that is
/// not busy with a slow block — one that has run for ``slowBlock`` or longer — so cheap
/// serializations (the common case, a validated `Data`) run one after another on one thread, while
/// a slow or blocked serializer sends the responses after it to the next queue, up to one queue per
/// CPU (at least four). Handing responses to the queues in turn instead would wake every queue's
/// thread for a fraction of the load (figures in `Docs/Decisions/0019-processing-lanes-and-callback-queues.md`).
///
/// **A handler for the library's completion queue may run on the lane's thread** once the response
/// is serialized (`sync` on that concurrent queue, so it is on the completion queue all the same),
/// instead of waking a pool thread: one wake-up fewer per request on the path from a response to
/// the next request its handler starts. The lane then holds the handler (``LaneOccupancy``): it
/// takes it only when no block is queued behind it, takes no response until it returns, and at most
/// all lanes but one hold one. So a handler that blocks — waiting for another operation's
/// response, say — holds up no response, and responses always have a lane.
package enum ProcessingQueues {
    /// How long a block runs before its queue counts as stuck and responses go to the next one.
    package static let slowBlock: UInt64 = 1_000_000  // nanoseconds

    /// One processing queue, when its current block started (0 when none is running), and its
    /// ``LaneOccupancy``.
    final class Lane: Sendable {
        let queue: DispatchQueue
        let runningSince = Atomic<UInt64>(0)
        /// A ``LaneOccupancy``'s raw word, changed only by ``update(_:)``.
        private let occupancy = Atomic<Int>(0)

        init(_ index: Int) {
            self.queue = DispatchQueue(label: "curlew.operation.processing.\(index)")
        }

        /// Queues `work` on this lane's queue, noting when it starts and ends, unless a handler runs
        /// on the lane now (then nothing is queued and this returns `false`). `work` is given the
        /// lane it runs on.
        func run(_ work: @escaping @Sendable (Lane) -> Void) -> Bool {
            guard self.update({ $0.queuing() }) else { return false }
            self.queue.async {
                _ = self.update { $0.starting() }
                self.runningSince.store(max(DispatchTime.now().uptimeNanoseconds, 1), ordering: .relaxed)
                work(self)
                self.runningSince.store(0, ordering: .relaxed)
            }
            return true
        }

        /// Whether a completion handler runs on this lane's thread now.
        var holdsHandler: Bool { LaneOccupancy(raw: self.occupancy.load(ordering: .relaxed)).holdsHandler }

        /// Applies `transition` atomically; `false` when it refused.
        fileprivate func update(_ transition: (LaneOccupancy) -> LaneOccupancy?) -> Bool {
            var current = self.occupancy.load(ordering: .relaxed)
            while true {
                guard let next = transition(LaneOccupancy(raw: current)) else { return false }
                let (exchanged, original) = self.occupancy.compareExchange(
                    expected: current, desired: next.raw, ordering: .acquiringAndReleasing)
                if exchanged { return true }
                current = original
            }
        }
    }

    /// One lane per CPU, at least four.
    static let lanes: [Lane] = (0..<max(4, ProcessInfo.processInfo.activeProcessorCount)).map(Lane.init)

    /// The queues, in the order they are tried.
    static let queues: [DispatchQueue] = lanes.map(\.queue)

    /// Handlers running on lanes now; at most `lanes.count - 1`, so one lane always takes responses.
    private static let lanesHoldingHandlers = Atomic<Int>(0)

    /// Runs `work` on the lane for the next response (see ``choose(runningSince:now:)``), telling
    /// `chosen` which lane before `work` is queued there. A lane that holds a handler is never chosen.
    /// Runs `work` on a processing queue (the async dialect's large serializations).
    package static func run(_ work: @escaping @Sendable () -> Void) {
        self.run({ _ in work() }, chosen: { _ in })
    }

    static func run(_ work: @escaping @Sendable (Lane) -> Void, chosen: (Lane) -> Void) {
        while true {
            let lane = self.nextLane()
            chosen(lane)
            // Refused only when a handler took the lane after it was chosen: choose again.
            if lane.run(work) { return }
        }
    }

    /// The lane for the next response; reads each lane's state once, without building an array. A
    /// lane that holds a handler counts as stuck since the clock began, so it is never chosen while
    /// another lane takes responses (and one always does).
    private static func nextLane() -> Lane {
        let now = DispatchTime.now().uptimeNanoseconds
        let states = self.lanes.lazy.map { $0.holdsHandler ? 1 : $0.runningSince.load(ordering: .relaxed) }
        return self.lanes[self.choose(runningSince: states, now: now)]
    }

    /// From a block running on `lane`: lets a completion handler run on the lane's thread, instead
    /// of waking another, when no block is queued behind it on that lane and another lane is free
    /// to take responses. Until ``releaseHandler(_:)``, nothing is queued on the lane, so a handler
    /// that blocks (waiting for another operation's response, say) holds up no response.
    static func claimForHandler(_ lane: Lane) -> Bool {
        let others = self.lanes.count - 1
        var holding = self.lanesHoldingHandlers.load(ordering: .relaxed)
        while true {
            guard holding < others else { return false }
            let (exchanged, original) = self.lanesHoldingHandlers.compareExchange(
                expected: holding, desired: holding + 1, ordering: .relaxed)
            if exchanged { break }
            holding = original
        }
        if lane.update({ $0.claimingForHandler() }) { return true }
        self.lanesHoldingHandlers.wrappingSubtract(1, ordering: .relaxed)
        return false
    }

    /// Ends ``claimForHandler(_:)``: the lane takes responses again.
    static func releaseHandler(_ lane: Lane) {
        _ = lane.update { $0.releasingHandler() }
        self.lanesHoldingHandlers.wrappingSubtract(1, ordering: .relaxed)
    }

    /// The policy alone: the offset of the first lane not running a block started `slowBlock` or
    /// more before `now` (a `runningSince` of 0 is idle); when every lane is, the one whose block
    /// started last.
    package static func choose(runningSince: some Sequence<UInt64>, now: UInt64) -> Int {
        var latest = 0
        var latestStart: UInt64 = 0
        for (index, started) in runningSince.enumerated() {
            if started == 0 || now &- started < self.slowBlock { return index }
            if started > latestStart {
                latest = index
                latestStart = started
            }
        }
        return latest
    }
}

/// What a processing lane holds besides its running block, as one word changed atomically: how
/// many blocks are queued on it and not started, and whether a completion handler runs on its
/// thread. The rule it keeps: a handler runs on a lane only when nothing is queued behind it there,
/// and nothing is queued behind a handler; so a handler that blocks never holds up a response.
package struct LaneOccupancy: Equatable, Sendable {
    /// Twice the blocks queued, plus one while a handler runs.
    package var raw: Int

    package init(raw: Int = 0) {
        self.raw = raw
    }

    /// Blocks queued on the lane and not started yet.
    package var queued: Int { self.raw >> 1 }

    /// Whether a completion handler runs on the lane's thread.
    package var holdsHandler: Bool { self.raw & 1 != 0 }

    /// One more block queued; `nil` (refused) while a handler runs.
    package func queuing() -> LaneOccupancy? {
        self.holdsHandler ? nil : LaneOccupancy(raw: self.raw + 2)
    }

    /// A queued block starts.
    package func starting() -> LaneOccupancy {
        LaneOccupancy(raw: self.raw - 2)
    }

    /// The running block hands its thread to a handler; `nil` (refused) when a block is queued
    /// behind it, which would wait for the handler.
    package func claimingForHandler() -> LaneOccupancy? {
        self.raw == 0 ? LaneOccupancy(raw: 1) : nil
    }

    /// The handler returned.
    package func releasingHandler() -> LaneOccupancy {
        LaneOccupancy(raw: self.raw & ~1)
    }
}
