import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

/// LESSONS.md 16–19: `BlockOperation`, dependencies, dispatch groups and batches, on Linux.
@Suite("Lessons: operations and groups")
struct GroupLessons {
    /// Lesson 16, first half. A `BlockOperation` started by hand runs its block on the thread that
    /// called `start()`, before `start()` returns; put on a queue, it runs on one of the queue's
    /// threads, never the thread that added it. (Both run from a plain `Thread`: the waits block.)
    @Test("16: a BlockOperation started by hand runs on the caller's thread; on a queue, elsewhere")
    func blockOperationThreads() async {
        let seen = Locked<[String: Int32]>([:])
        @Sendable func note(_ key: String) {
            if let id = ProcessInspector.currentThreadID() { seen.withLock { $0[key] = id } }
        }
        let doneBeforeReturn = Locked<Bool?>(nil)
        Thread {
            note("starter")
            let byHand = BlockOperation { note("by hand") }
            byHand.start()
            doneBeforeReturn.set(byHand.isFinished)

            let queue = OperationQueue()
            let queued = BlockOperation { note("queued") }
            queue.addOperation(queued)
            queued.waitUntilFinished()
            note("adder")
        }.start()
        #expect(await waitUntil { seen.value.count == 4 })
        let threads = seen.value
        #expect(threads["by hand"] == threads["starter"], "started by hand: the caller's thread")
        #expect(doneBeforeReturn.value == true, "start() returned after the block ran")
        #expect(threads["queued"] != nil && threads["queued"] != threads["adder"], "on a queue: another thread")
    }

    /// Lesson 16, second half — where Linux differs. The article shows a `BlockOperation`'s extra
    /// execution blocks running at the same time on several threads (Darwin's Foundation does
    /// that). swift-corelibs-foundation's `BlockOperation.main()` calls them one after another on
    /// one thread. Shown without relying on timing for the result: the first block waits (at most
    /// 300 ms) for the second to start, which on Darwin happens at once; on Linux the wait always
    /// runs out, because the second block cannot start until the first returns, and all three run
    /// in order on the thread that started the operation. (On Linux, concurrency comes from separate
    /// operations on a queue, or `DispatchQueue.concurrentPerform`.)
    @Test("16: extra execution blocks: in order, on one thread, on Linux")
    func executionBlocks() async {
        let order = Locked<[String]>([])
        let threads = Locked<Set<Int32>>([])
        let secondStarted = DispatchSemaphore(value: 0)
        let firstSawSecond = Locked<Bool?>(nil)
        @Sendable func note(_ name: String) {
            order.withLock { $0.append(name) }
            if let id = ProcessInspector.currentThreadID() { threads.withLock { _ = $0.insert(id) } }
        }
        let operation = BlockOperation {
            note("A")
            firstSawSecond.set(secondStarted.wait(timeout: .now() + .milliseconds(300)) == .success)
        }
        operation.addExecutionBlock {
            note("B")
            secondStarted.signal()
        }
        operation.addExecutionBlock { note("C") }
        let starter = Locked<Int32?>(nil)
        Thread {
            starter.set(ProcessInspector.currentThreadID())
            operation.start()
        }.start()
        #expect(await waitUntil { operation.isFinished })
        #expect(firstSawSecond.value == false, "Linux: the second block had not started while the first ran")
        #expect(order.value == ["A", "B", "C"], "Linux: one after another, in order")
        #expect(threads.value == Set([starter.value].compactMap { $0 }), "Linux: all on the thread that started it")
    }

    /// Lesson 17. A dependency holds an operation back even when both are on the queue together
    /// and the queue has room: `dependant` (added first) waits while its dependency — a request,
    /// held on purpose (its network context is blocked, so it cannot complete) — runs, and starts
    /// only after the request finished; `free`, added at the same moment without a dependency, does
    /// not wait.
    @Test("17: a dependency holds an operation back, even queued together", arguments: BackendConfiguration.allCases)
    func dependency(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let request = RequestOperation(request: TransferRequest(url: try server().url(.bytes(10))), engine: engine)
        let sawRequestFinished = Locked<Bool?>(nil)
        let dependant = BlockOperation { sawRequestFinished.set(request.isFinished) }
        dependant.addDependency(request)
        let free = BlockOperation {}
        let hold = await ContextGate.hold(engine)
        let queue = OperationQueue()
        queue.enqueue([dependant, request, free])
        #expect(await waitUntil { free.isFinished && request.isExecuting }, "operations without dependencies start at once")
        #expect(await holdsThroughout(.milliseconds(50)) { !dependant.isExecuting && !dependant.isFinished },
                "the dependant waits while its dependency runs")
        hold.release()
        #expect(await waitUntil { dependant.isFinished })
        #expect(sawRequestFinished.value == true, "it ran after the dependency had finished")
        #expect(request.responseData?.count == 10)
        await engine.shutdown()
    }

    /// Lesson 17, where Linux differs: the dependant must outlive its dependency. An operation keeps
    /// its dependencies alive (strongly) but each dependency points back at its dependants
    /// *unretained*, and swift-corelibs-foundation has no `deinit` that unlinks them: a dependant
    /// released before its dependency finishes leaves a dangling pointer, and the dependency's finish
    /// (its `isFinished` change, which releases the dependants that were waiting) dereferences it.
    /// The process crashes — here in a child process. (The batch relies on this being avoided: each
    /// member keeps the batch's completion operation alive until it has finished.)
    @Test("17: on Linux a dependant released before its dependency finishes crashes the process")
    func dependantMustOutliveDependency() async {
        await #expect(processExitsWith: .failure) {
            let dependency = BlockOperation {}
            do {
                let dependant = BlockOperation {}
                dependant.addDependency(dependency)
            }
            dependency.start()
        }
    }

    /// Lesson 18. A dispatch group's `notify` block runs once every task in the group has left it —
    /// also tasks that joined after `notify` was registered, as long as the group had not emptied
    /// (the article's task C). The tasks run on a queue that is suspended until they are all
    /// submitted, so C joins a group that is certainly not empty yet. A group that is empty when
    /// `notify` is registered runs it at once (which is why an empty batch still completes).
    @Test("18: a group's notify runs after every task has left the group")
    func groupNotify() async {
        let log = Locked<[String]>([])
        let tasks = DispatchQueue(label: "lesson18.tasks", attributes: .concurrent)
        let last = DispatchQueue(label: "lesson18.last")
        let group = DispatchGroup()
        tasks.suspend()
        tasks.async(group: group) { log.withLock { $0.append("A") } }
        tasks.async(group: group) { log.withLock { $0.append("B") } }
        group.notify(queue: last) { log.withLock { $0.append("LAST") } }
        tasks.async(group: group) { log.withLock { $0.append("C") } }
        #expect(await holdsThroughout(.milliseconds(50)) { log.value.isEmpty }, "nothing runs, nothing notified")
        tasks.resume()
        #expect(await waitUntil { log.value.contains("LAST") })
        #expect(log.value.count == 4 && log.value.last == "LAST", "\(log.value)")
        #expect(Set(log.value.dropLast()) == ["A", "B", "C"])

        let empty = DispatchGroup()
        let ranAtOnce = Locked(false)
        empty.notify(queue: last) { ranAtOnce.set(true) }
        #expect(await waitUntil { ranAtOnce.value }, "an empty group notifies at once")
    }

    /// Lesson 19. A batch: each member's completion is wrapped so that, after the member's own
    /// handler, progress is reported (finished count, total) and the group is left; the final
    /// operation depends on every member; the batch completion runs after every member's own
    /// completion handler, also when a member fails; an empty batch still calls its completion,
    /// with no operations.
    @Test("19: the batch completion runs after every member's own completion handler", arguments: BackendConfiguration.allCases)
    func batch(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeOperationLessonScheduler())
        let routes: [Route] = [.delay(200), .bytes(10), .closeMidBody(bytes: 1_000)]
        let log = Locked<[String]>([])
        let members = try routes.enumerated().map { index, route in
            let operation = RequestOperation(request: TransferRequest(url: try server().url(route)), engine: engine)
            operation.setCompletionHandlers(success: { _, _ in log.withLock { $0.append("handler \(index)") } },
                                            failure: { _, _ in log.withLock { $0.append("handler \(index)") } })
            return operation
        }
        let operations = RequestOperation.batch(of: members, progress: { finished, total in
            log.withLock { $0.append("progress \(finished)/\(total)") }
        }, completion: { operations in
            log.withLock { $0.append("completion \(operations.count)") }
        })
        let final = try #require(operations.last)
        #expect(operations.count == 4 && Set(final.dependencies.map(ObjectIdentifier.init)) == Set(members.map(ObjectIdentifier.init)),
                "the final operation depends on every member")
        let queue = OperationQueue()
        queue.enqueue(operations)
        #expect(await waitUntil { log.value.last == "completion 3" })
        let entries = log.value
        #expect(entries.filter { $0.hasPrefix("progress") } == ["progress 1/3", "progress 2/3", "progress 3/3"])
        for count in 1...3 {
            let progress = try #require(entries.firstIndex(of: "progress \(count)/3"))
            #expect(entries[..<progress].filter { $0.hasPrefix("handler") }.count >= count,
                    "progress \(count) came after \(count) handlers: \(entries)")
        }
        #expect(entries.count == 7, "\(entries)")
        #expect(members[2].error != nil, "the failing member failed, and was waited for all the same")

        let empty = Locked<[Operation]?>(nil)
        let emptyBatch = RequestOperation.batch(of: [], completion: { empty.set($0) })
        queue.enqueue(emptyBatch)
        #expect(await waitUntil { empty.value != nil })
        #expect(empty.value?.isEmpty == true)
        await engine.shutdown()
    }
}
