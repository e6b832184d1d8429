import CurlewDispatch
import CurlewRunLoop
import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Dispatch
import Foundation
import Testing

/// LESSONS.md 1 and 7 on the GCD side: a serial queue is the context, and no thread is dedicated.
@Suite("Lessons: the delegate queue")
struct DispatchLessons {
    /// Lesson 1 again: a suspended queue is a stopped context.
    @Test("1: a suspended delegate queue completes nothing")
    func suspendedQueue() async throws {
        let scheduler = DispatchScheduler(label: "lesson1")
        let engine = TransferEngine(scheduler: scheduler)
        let delegate = ThreadNotingDelegate()
        scheduler.queue.suspend()
        engine.makeTransfer(TransferRequest(url: try server().url(.bytes(10))), delegate: delegate).start()
        #expect(await holdsThroughout(.milliseconds(300)) { !delegate.isDone }, "completed on a suspended queue")
        scheduler.queue.resume()
        #expect(await waitUntil { delegate.isDone })
        await engine.shutdown()
    }

    /// Lesson 7. GCD keeps a pool of threads and runs blocks on them, instead of making a thread per
    /// task (the benchmark runner measures what that costs). The delegate-queue backend makes no
    /// thread of its own.
    @Test("7: dispatch reuses a few pooled threads; the dispatch backend makes none")
    func noDedicatedThread() async throws {
        // 200 blocks on a global queue run on a handful of pooled threads…
        let pooled = Locked<Set<Int32>>([])
        let group = DispatchGroup()
        for _ in 0..<200 {
            DispatchQueue.global().async(group: group) {
                if let id = ProcessInspector.currentThreadID() { pooled.withLock { _ = $0.insert(id) } }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: DispatchQueue(label: "lesson7.notify")) { continuation.resume() }
        }
        #expect(pooled.value.count <= 64, "GCD used \(pooled.value.count) threads for 200 blocks")
        // The dispatch backend runs 100 transfers on libdispatch's pooled threads: none of the
        // threads that ran their callbacks is a thread of Curlew's own. (Other suites start
        // Curlew threads in this process at the same time, so the check looks at these callbacks.)
        let scheduler = DispatchScheduler(label: "lesson7")
        let engine = TransferEngine(scheduler: scheduler)
        let delegates = (0..<100).map { _ in ThreadNotingDelegate() }
        for delegate in delegates {
            engine.makeTransfer(TransferRequest(url: try server().url(.bytes(100))), delegate: delegate).start()
        }
        #expect(await waitUntil { delegates.allSatisfy(\.isDone) })
        let callbackThreads = Set(delegates.flatMap { $0.threads.value })
        let names = callbackThreads.compactMap { ProcessInspector.threadName($0) }
        #expect(!callbackThreads.isEmpty)
        #expect(!names.contains { $0.hasPrefix("Curlew") }, "dispatch callbacks ran on \(names)")
        await engine.shutdown()
    }
}
