import Curlew
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
    /// Lesson 1 again: a suspended queue is a stopped context. The transfer starts first: its
    /// request reaches the server, which answers a while later. Then the queue is suspended from a
    /// block running on it — so the suspension takes effect exactly when that block returns, and the
    /// block reads whether the transfer had completed by then; the server's record shows the answer
    /// sent, and nothing completes until the queue runs again. (Should the answer beat the
    /// suspension on a very slow machine, the premise is missed and the attempt is made again with a
    /// longer delay — never the claim's check. Dispatch only: the run-loop twin is
    /// `Lessons: the network thread` → 1.)
    @Test("1: a suspended delegate queue completes nothing")
    func suspendedQueue() async throws {
        let server = try testServer()
        let scheduler = DispatchScheduler(label: "lesson1", sockets: .sourcePerSocket)
        let engine = TransferEngine(scheduler: scheduler)
        var shown = false
        for delay in [1_000, 3_000, 9_000, 27_000] where !shown {
            let delegate = ThreadNotingDelegate()
            let doneWhenSuspended = Locked<Bool?>(nil)
            let tag = UUID().uuidString
            engine.makeTransfer(TransferRequest(url: server.url(.delay(delay))).tagged(tag), delegate: delegate).start()
            // As soon as the request is at the server, suspend the queue (watched from a thread of
            // its own, so no test-task wake-up lies between the two).
            let queue = scheduler.queue
            onOwnThread(when: { server.requests(tagged: tag).count == 1 }) {
                queue.async {
                    queue.suspend()  // takes effect when this block returns
                    doneWhenSuspended.set(delegate.isDone)
                }
            }
            #expect(await waitUntil(timeout: .seconds(60)) { doneWhenSuspended.value != nil },
                    "the request never reached the server, or the queue never ran the suspending block")
            guard let doneFirst = doneWhenSuspended.value else {
                return  // recorded above; the queue may still be suspended later, so no shutdown
            }
            if doneFirst {
                queue.resume()  // premise missed: the answer came before the suspension
                _ = await waitUntil { delegate.isDone }
                continue
            }
            #expect(await waitUntil(timeout: .seconds(60)) { server.requests(tagged: tag).first?.outcome == .answered },
                    "the server never answered")
            let stayedStopped = await holdsThroughout(.milliseconds(300)) { !delegate.isDone }
            queue.resume()
            #expect(stayedStopped, "completed on a suspended queue")
            #expect(await waitUntil { delegate.isDone })
            #expect(try delegate.result.value?.get().body == Data("delayed\n".utf8))
            shown = true
        }
        #expect(shown, "four times the answer came before the queue could be suspended")
        await engine.shutdown()
    }

    /// Lesson 7. Creating threads is costly; GCD keeps a pool of threads and runs blocks on them.
    /// The delegate-queue backend (`DispatchScheduler`, behind `Curlew.defaultEngine`) needs no
    /// dedicated thread at all.
    ///
    /// Counted from `/proc/self/task` in a child process of its own (an exit test), where no other
    /// test starts or ends threads meanwhile: 200 blocks on a global queue ran on a few pooled
    /// threads; 200 `Thread`s, alive together, were 200 more kernel threads (and gone once they
    /// returned); 100 requests on `Curlew.defaultEngine` made no thread of Curlew's own and far fewer
    /// threads than requests, while the same requests on a `RunLoopScheduler` made its one network
    /// thread. (The cost side — CPU per request of a thread per operation — is measured by the
    /// benchmark runner.) Dispatch only: the run-loop backend's thread is lesson 3.
    @Test("7: 200 Threads are 200 threads; GCD pools them; the dispatch backend makes none")
    func threadsAndThePool() async throws {
        let child = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            print(await DispatchLessons.threadFacts())
        }
        let facts = ChildFacts.parse(child?.standardOutputContent ?? [])
        print("lesson 7: \(facts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        let pooled = try #require(facts["gcd-threads-for-200-blocks"].flatMap { Int($0) }, "\(facts)")
        #expect(pooled >= 1 && pooled <= 64, "GCD used \(pooled) threads for 200 blocks")
        #expect(facts["threads-added-by-200-Threads"].flatMap { Int($0) } ?? 0 >= 200, "\(facts)")
        #expect(facts["distinct-ids-of-200-Threads"] == "200", "\(facts)")
        #expect(facts["200-Threads-gone-after-return"] == "true", "\(facts)")
        #expect(facts["requests-on-default-engine"] == "100", "\(facts)")
        #expect(facts["curlew-threads-made-by-dispatch-backend"] == "0", "\(facts)")
        let added = try #require(facts["threads-added-by-dispatch-backend"].flatMap { Int($0) }, "\(facts)")
        #expect(added < 25, "100 requests on the dispatch backend added \(added) threads")
        #expect(facts["curlew-threads-made-by-runloop-backend"] == "1", "the control: \(facts)")
    }

    /// The child of lesson 7: thread counts in a fresh process.
    static func threadFacts() async -> String {
        var facts = ChildFacts()
        guard let server = try? testServer() else { return facts.line(failing: "no test server") }
        func threadIDs() -> Set<Int32> { Set(ProcessInspector.threads().map(\.id)) }
        func curlewThreads(among ids: Set<Int32>) -> Int {
            ids.compactMap(ProcessInspector.threadName).filter { $0.hasPrefix("Curlew") }.count
        }

        // 200 blocks on a global queue.
        let pooled = Locked<Set<Int32>>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for _ in 0..<200 {
                DispatchQueue.global().async(group: group) {
                    if let id = ProcessInspector.currentThreadID() { pooled.withLock { _ = $0.insert(id) } }
                }
            }
            group.notify(queue: DispatchQueue(label: "lesson7.notify")) { continuation.resume() }
        }
        facts["gcd-threads-for-200-blocks"] = "\(pooled.value.count)"

        // 200 Threads, alive together until released.
        let beforeThreads = threadIDs()
        let started = Locked<Set<Int32>>([])
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<200 {
            Thread {
                if let id = ProcessInspector.currentThreadID() { started.withLock { _ = $0.insert(id) } }
                release.wait()
            }.start()
        }
        _ = await waitUntil { started.value.count == 200 }
        facts["threads-added-by-200-Threads"] = "\(threadIDs().subtracting(beforeThreads).count)"
        facts["distinct-ids-of-200-Threads"] = "\(started.value.count)"
        for _ in 0..<200 { release.signal() }
        facts["200-Threads-gone-after-return"] = "\(await waitUntil { threadIDs().isDisjoint(with: started.value) })"

        // 100 requests on the default engine: a DispatchScheduler.
        let beforeDispatch = threadIDs()
        let operations = (0..<100).map { _ in RequestOperation(request: TransferRequest(url: server.url(.bytes(100)))) }
        for operation in operations { operation.start() }
        _ = await waitUntil { operations.allSatisfy(\.isFinished) }
        facts["requests-on-default-engine"] = "\(operations.filter { $0.responseData?.count == 100 }.count)"
        let madeByDispatch = threadIDs().subtracting(beforeDispatch)
        facts["threads-added-by-dispatch-backend"] = "\(madeByDispatch.count)"
        facts["curlew-threads-made-by-dispatch-backend"] = "\(curlewThreads(among: madeByDispatch))"

        // The control: the same on the run-loop backend starts its network thread.
        let beforeRunLoop = threadIDs()
        let engine = TransferEngine(scheduler: RunLoopScheduler())
        let classic = (0..<100).map { _ in RequestOperation(request: TransferRequest(url: server.url(.bytes(100))), engine: engine) }
        for operation in classic { operation.start() }
        _ = await waitUntil { classic.allSatisfy(\.isFinished) }
        facts["curlew-threads-made-by-runloop-backend"] = "\(curlewThreads(among: threadIDs().subtracting(beforeRunLoop)))"
        await engine.shutdown()
        return facts.line()
    }
}
