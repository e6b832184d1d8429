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
/// CPU (at least four). Handing responses to the queues in turn instead woke every queue's thread
/// for a fraction of the load: on a 2-CPU machine, small GETs through `RequestOperation` at 16 in
/// flight ran at 15.7–16.7k requests/s with four queues in turn and 19.0–21.0k with one queue
/// (84–87 against 70–74 µs of CPU per request).
package enum ProcessingQueues {
    /// How long a block runs before its queue counts as stuck and responses go to the next one.
    package static let slowBlock: UInt64 = 1_000_000  // nanoseconds

    /// One processing queue, and when its current block started (0 when none is running).
    final class Lane: Sendable {
        let queue: DispatchQueue
        let runningSince = Atomic<UInt64>(0)

        init(_ index: Int) {
            self.queue = DispatchQueue(label: "curlew.operation.processing.\(index)")
        }

        /// Runs `work` on this lane's queue, noting when it starts and ends.
        func run(_ work: @escaping @Sendable () -> Void) {
            self.queue.async {
                self.runningSince.store(max(DispatchTime.now().uptimeNanoseconds, 1), ordering: .relaxed)
                work()
                self.runningSince.store(0, ordering: .relaxed)
            }
        }
    }

    /// One lane per CPU, at least four.
    static let lanes: [Lane] = (0..<max(4, ProcessInfo.processInfo.activeProcessorCount)).map(Lane.init)

    /// The queues, in the order they are tried.
    static let queues: [DispatchQueue] = lanes.map(\.queue)

    /// The lane for the next response (see ``choose(runningSince:now:)``); reads each lane's state
    /// once, without building an array.
    static func nextLane() -> Lane {
        let now = DispatchTime.now().uptimeNanoseconds
        let index = self.choose(runningSince: self.lanes.lazy.map { $0.runningSince.load(ordering: .relaxed) }, now: now)
        return self.lanes[index]
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
