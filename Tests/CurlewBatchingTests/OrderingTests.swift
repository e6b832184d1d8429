import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

/// The batch completion comes after every member's own completion; progress rises by one to the
/// total; an empty batch completes too.
@Suite("OperationBatch: ordering")
struct OrderingTests {
    /// Members that finish out of input order (one depends on a later one), fail (a body cut short,
    /// a refused connection), are cancelled while running, run on another backend, or are plain
    /// `BlockOperation`s: each member's own handler and `completionBlock` come before the progress
    /// that counts it, and all of them before the completion; progress goes 1…7; the completion
    /// runs on the queue given, once, with the members in input order; an operation depending on
    /// the completion operation runs after the completion.
    @Test("the completion comes after every member's own completion", arguments: BackendConfiguration.allCases)
    func completionAfterOwnCompletions(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            try await withEngine(on: backend.other.makeBatchScheduler()) { otherEngine in
                let server = try testServer()
                let log = OrderLog()
                let late = log.instrument(try get(.bytes(100), on: engine), as: 0)
                let cutShort = log.instrument(try get(.closeMidBody(bytes: 10_000), on: engine), as: 1)
                let refused = log.instrument(get(server.refusedURL, on: engine), as: 2)
                let cancelled = log.instrument(try get(.delay(60_000), on: engine), as: 3)
                let elsewhere = log.instrument(try get(.bytes(10), on: otherEngine), as: 4)
                let block = BlockOperation {}
                block.completionBlock = { log.append(.completionBlock(5)) }
                let early = log.instrument(try get(.bytes(1_000), on: engine), as: 6)
                late.addDependency(early)
                let members: [Operation] = [late, cutShort, refused, cancelled, elsewhere, block, early]

                let mine = MarkedQueue("batch-tests.ordering")
                let probe = BatchProbe(queue: mine)
                let batch = OperationBatch(of: members, queue: mine.queue, progress: { finished, total in
                    probe.progress(finished, total)
                    log.append(.progress(finished))
                }, completion: { operations in
                    probe.completion(operations)
                    log.append(.completion)
                })
                let dependant = BlockOperation { log.append(.dependant) }
                dependant.addDependency(batch.completionOperation)
                let queue = OperationQueue()
                queue.enqueue(batch.operations + [dependant])

                #expect(await waitUntil { cancelled.isExecuting })
                cancelled.cancel()
                await probe.expectCompleted(with: members)
                #expect(await waitUntil { log.occurrences(of: .dependant) == 1 })
                #expect(await waitUntil { batch.completionOperation.isFinished })

                let entries = log.entries.value
                #expect(entries.last == .dependant, "\(entries)")
                #expect(entries.dropLast().last == .completion, "\(entries)")
                let ownCompletions: [[OrderLog.Entry]] = (0..<members.count).map { index in
                    index == 5 ? [.completionBlock(5)] : [.handler(index), .completionBlock(index)]
                }
                for entry in ownCompletions.joined() {
                    #expect(log.occurrences(of: entry) == 1, "\(entry) in \(entries)")
                }
                // Progress k comes after at least k members' own completions have all run.
                for count in 1...members.count {
                    let position = try #require(log.position(of: .progress(count)))
                    let done = ownCompletions.filter { own in
                        own.allSatisfy { (log.position(of: $0) ?? Int.max) < position }
                    }
                    #expect(done.count >= count, "progress \(count) after only \(done.count) own completions: \(entries)")
                }
                #expect(try #require(log.position(of: .handler(6))) < (try #require(log.position(of: .handler(0)))),
                        "the dependency finished first, out of input order")

                #expect(late.responseData?.count == 100)
                #expect((cutShort.error as? TransferError) != nil)
                #expect((refused.error as? TransferError)?.code == .cannotConnectToHost)
                #expect((cancelled.error as? TransferError)?.isCancellation == true)
                #expect(elsewhere.responseData?.count == 10)
                #expect(block.isFinished && !block.isCancelled)
            }
        }
    }

    /// A member is counted only once its own success or failure handler has returned: the handler
    /// holds on for 200 ms and, just before it returns, finds nothing reported yet; afterwards the
    /// member is counted and the batch completes. The same for a `completionBlock`, of a request
    /// operation and of a plain one. (The hold is a window, not a synchronization: a correct batch
    /// passes however slow the machine; one that counted early would be caught in it. It never
    /// waits for the test's task, so it cannot deadlock with a starved cooperative pool.)
    @Test("a member is counted only after its own handler or completionBlock returned", arguments: BackendConfiguration.allCases)
    func ownCompletionReturnsFirst(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            enum Held: CaseIterable { case handler, requestCompletionBlock, blockCompletionBlock }
            for held in Held.allCases {
                let probe = BatchProbe()
                let uncountedAtReturn = Locked<Bool?>(nil)
                let hold: @Sendable () -> Void = {
                    _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(200))
                    uncountedAtReturn.set(probe.record.value.progress.isEmpty && probe.completions == 0)
                }
                let member: Operation
                switch held {
                case .handler:
                    let operation = try get(.bytes(10), on: engine)
                    operation.completionQueue = DispatchQueue(label: "batch-tests.held-handler")
                    operation.setCompletionHandlers(success: { _, _ in hold() }, failure: { _, _ in hold() })
                    member = operation
                case .requestCompletionBlock:
                    let operation = try get(.bytes(10), on: engine)
                    operation.completionBlock = hold
                    member = operation
                case .blockCompletionBlock:
                    let operation = BlockOperation {}
                    operation.completionBlock = hold
                    member = operation
                }
                let batch = OperationBatch(of: [member], progress: probe.progress, completion: probe.completion)
                let queue = OperationQueue()
                queue.enqueue(batch.operations)
                await probe.expectCompleted(with: [member])
                #expect(uncountedAtReturn.value == true, "\(held): counted while its own completion was still running")
            }
        }
    }

    /// A thousand members on one queue: progress 1…1,000, each once, in order, never two at once;
    /// the completion once; every result a success. The backends take turns (`.serialized`), like
    /// the operations' stress test: three thousand operations at once would flood libdispatch's
    /// small pool and stall the other suites running meanwhile.
    @Test("1,000 members: progress rises by one to the total, once each", .serialized,
          arguments: BackendConfiguration.allCases)
    func thousandMembers(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let members = try (0..<1_000).map { _ in try get(.bytes(13), on: engine) }
            let probe = BatchProbe()
            let batch = OperationBatch(of: members, progress: probe.progress, completion: probe.completion)
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 32
            queue.enqueue(batch.operations)
            let results = try await batch.results()
            await probe.expectCompleted(with: members)
            #expect(results.count == 1_000)
            #expect(results.allSatisfy { ((try? $0.get()) as? Data)?.count == 13 })
            #expect(await waitUntil { batch.completionOperation.isFinished })
        }
    }

    /// An empty batch: one operation to enqueue, the completion once with no operations (off the
    /// main thread, on the library's queue), no progress, no results.
    @Test("an empty batch still completes, with no operations")
    func emptyBatch() async throws {
        let probe = BatchProbe()
        let operations = RequestOperation.batch(of: [], progress: probe.progress, completion: probe.completion)
        #expect(operations.count == 1)
        let queue = OperationQueue()
        queue.enqueue(operations)
        await probe.expectCompleted(with: [])

        let handle = OperationBatch(of: [])
        #expect(try await handle.results().isEmpty)
        #expect(handle.operations.count == 1 && handle.members.isEmpty)
    }

    /// Members that depend on each other, listed against their order, plain and request operations
    /// mixed: each starts after the one it depends on finished, and the batch completes after the
    /// last.
    @Test("members depending on each other", arguments: BackendConfiguration.allCases)
    func dependenciesAmongMembers(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let first = try get(.bytes(10), on: engine)
            let secondSawFirstFinished = Locked<Bool?>(nil)
            let second = BlockOperation { secondSawFirstFinished.set(first.isFinished) }
            let thirdSawSecondFinished = Locked<Bool?>(nil)
            let third = BlockOperation { thirdSawSecondFinished.set(second.isFinished) }
            second.addDependency(first)
            third.addDependency(second)
            let members: [Operation] = [third, second, first]
            let probe = BatchProbe()
            let batch = OperationBatch(of: members, progress: probe.progress, completion: probe.completion)
            let queue = OperationQueue()
            queue.enqueue(batch.operations.reversed())
            await probe.expectCompleted(with: members)
            #expect(secondSawFirstFinished.value == true)
            #expect(thirdSawSecondFinished.value == true)
            #expect(first.responseData?.count == 10)
        }
    }

    /// The completion operation cancelled before the members finished: Foundation starts it early
    /// (a cancelled operation loses its dependencies), and it waits for every member all the same.
    @Test("a cancelled completion operation still waits for the members", arguments: BackendConfiguration.allCases)
    func cancelledCompletionOperation(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let log = OrderLog()
            let members = try (0..<3).map { log.instrument(try get(.delay(60_000), on: engine), as: $0) }
            let batch = OperationBatch(of: members, progress: { count, _ in log.append(.progress(count)) },
                                       completion: { _ in log.append(.completion) })
            batch.completionOperation.cancel()
            let queue = OperationQueue()
            queue.enqueue(batch.operations)
            #expect(await waitUntil { batch.completionOperation.isExecuting && members.allSatisfy(\.isExecuting) },
                    "started early, waiting")
            #expect(await holdsThroughout(.milliseconds(50)) { log.occurrences(of: .completion) == 0 })
            batch.cancel()
            #expect(await waitUntil { log.occurrences(of: .completion) == 1 })
            let completion = try #require(log.position(of: .completion))
            for index in members.indices {
                #expect((log.position(of: .handler(index)) ?? Int.max) < completion)
            }
            #expect(log.progress == [1, 2, 3])
            #expect(await waitUntil { batch.completionOperation.isFinished })
        }
    }
}
