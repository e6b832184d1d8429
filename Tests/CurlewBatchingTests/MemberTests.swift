import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

/// What the batch does to its members: it borrows their completion group and completion block and
/// gives them back; it copes with members that finished already, are listed twice, or outlive it.
@Suite("OperationBatch: members")
struct MemberTests {
    /// A request operation's own completion group keeps working: entered for the member while the
    /// batch waits for it, its `notify` runs after the member's handler. After the batch the member
    /// has its own group back, and nothing of the batch is left on it: once the member lets go of
    /// the group, the group is released (a wrapper still installed as its `completionBlock`, or a
    /// batch still alive, would hold it).
    @Test("a member's own completion group is kept and given back", arguments: BackendConfiguration.allCases)
    func ownGroupGivenBack(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let log = OrderLog()
            let member = log.instrument(try get(.bytes(10), on: engine), as: 0)
            weak var releasedGroup: DispatchGroup?
            do {
                let ownGroup = DispatchGroup()
                releasedGroup = ownGroup
                member.completionGroup = ownGroup
                let probe = BatchProbe()
                let batch = OperationBatch(of: [member], progress: probe.progress, completion: probe.completion)
                #expect(member.completionGroup !== ownGroup, "the batch borrows the group while the member runs")
                let notified = Locked(false)
                ownGroup.notify(queue: .global()) { notified.set(true) }
                #expect(await holdsThroughout(.milliseconds(20)) { !notified.value },
                        "the group is entered for the member while the batch waits for it")
                let queue = OperationQueue()
                queue.enqueue(batch.operations)
                await probe.expectCompleted(with: [member])
                #expect(notified.value, "the member's own group was left once its handler had run")
                #expect(log.occurrences(of: .handler(0)) == 1 && log.occurrences(of: .completionBlock(0)) == 1)
                #expect(member.completionGroup === ownGroup)
                #expect(await waitUntil { batch.completionOperation.isFinished })
            }
            member.completionGroup = nil
            #expect(await waitUntil { releasedGroup == nil }, "something of the batch still holds the member's group")
        }
    }

    /// A member that finished before the batch was made counts at once; an operation listed twice
    /// is one member.
    @Test("a member finished already counts; a member listed twice counts once", arguments: BackendConfiguration.allCases)
    func finishedAndDuplicateMembers(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let done = try get(.bytes(10), on: engine)
            done.start()
            _ = try await done.responseObject()
            #expect(await waitUntil { done.isFinished })
            let twice = try get(.bytes(20), on: engine)
            let probe = BatchProbe()
            let batch = OperationBatch(of: [done, twice, twice], progress: probe.progress, completion: probe.completion)
            #expect(batch.members.count == 2 && batch.operations.count == 3)
            // Foundation refuses to enqueue a finished operation: only the others go on the queue.
            let queue = OperationQueue()
            queue.enqueue([twice, batch.completionOperation])
            await probe.expectCompleted(with: [done, twice])
            let results = try await batch.results()
            #expect(results.count == 2)
            #expect(((try? results[0].get()) as? Data)?.count == 10)
            #expect(((try? results[1].get()) as? Data)?.count == 20)
        }
    }

    /// Plain operations: a `BlockOperation` member succeeds with no value; one cancelled before it
    /// ran fails with `CancellationError` (Foundation still runs its `completionBlock`).
    @Test("plain operations as members")
    func plainOperations() async throws {
        let ran = Locked(0)
        let runs = BlockOperation { ran.withLock { $0 += 1 } }
        let skipped = BlockOperation { ran.withLock { $0 += 100 } }
        let probe = BatchProbe()
        let batch = OperationBatch(of: [runs, skipped], progress: probe.progress, completion: probe.completion)
        skipped.cancel()
        let queue = OperationQueue()
        queue.enqueue(batch.operations)
        let results = try await batch.results()
        await probe.expectCompleted(with: [runs, skipped])
        #expect(ran.value == 1)
        #expect(throws: Never.self) { try results[0].get() }
        #expect(throws: CancellationError.self) { try results[1].get() }
    }

    /// A batch nobody keeps — its handle dropped, its completion operation never enqueued — is kept
    /// alive by its unfinished members (on Linux an operation released before its dependencies
    /// finish crashes the process when they do): they are counted, the member's own group is left
    /// after its handler, the completion never runs (its operation never started), and once every
    /// member has finished the batch is released.
    @Test("a batch nobody keeps lives as long as its members", arguments: BackendConfiguration.allCases)
    func batchNobodyKeeps(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let log = OrderLog()
            let members = try (0..<3).map { log.instrument(try get(.bytes(10), on: engine), as: $0) }
            let ownGroup = DispatchGroup()
            members[0].completionGroup = ownGroup
            let completed = Locked(false)
            weak var completionOperation: Operation?
            do {
                let batch = OperationBatch(of: members, progress: { count, _ in log.append(.progress(count)) },
                                           completion: { _ in completed.set(true) })
                completionOperation = batch.completionOperation
            }
            #expect(completionOperation != nil, "the unfinished members keep the batch")
            let notified = Locked<Int?>(nil)
            ownGroup.notify(queue: .global()) { notified.set(log.occurrences(of: .handler(0))) }
            let queue = OperationQueue()
            queue.enqueue(members)
            #expect(await waitUntil { log.progress == [1, 2, 3] })
            #expect(await waitUntil { notified.value != nil })
            #expect(notified.value == 1, "the member's own group was left after its handler")
            #expect(members.indices.allSatisfy { log.occurrences(of: .handler($0)) == 1 && log.occurrences(of: .completionBlock($0)) == 1 })
            #expect(await waitUntil { completionOperation == nil }, "the batch outlived its members")
            #expect(!completed.value, "the completion needs its operation started")
        }
    }
}
