import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

/// Cancelling a batch, the task awaiting it, and fail-fast: every member still finishes exactly
/// once, and the batch completes.
@Suite("OperationBatch: cancellation")
struct BatchCancellationTests {
    /// Ten quick members, then thirty that would take a minute, on a queue eight wide; the batch is
    /// cancelled from its own progress at 10. The slow members are then running or not started yet:
    /// every one finishes exactly once with a cancellation error, progress still reaches 40 once,
    /// and the completion runs once.
    @Test("cancelled half-way: every member finishes exactly once", arguments: BackendConfiguration.allCases)
    func cancelledHalfWay(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let log = OrderLog()
            let quick = try (0..<10).map { log.instrument(try get(.bytes(10), on: engine), as: $0) }
            let slow = try (10..<40).map { log.instrument(try get(.delay(60_000), on: engine), as: $0) }
            let members = quick + slow
            let probe = BatchProbe()
            let handle = Locked<OperationBatch?>(nil)
            let batch = OperationBatch(of: members, progress: { finished, total in
                probe.progress(finished, total)
                if finished == 10 { handle.value?.cancel() }
            }, completion: probe.completion)
            handle.set(batch)
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 8
            queue.enqueue(batch.operations)

            await probe.expectCompleted(with: members)
            #expect(await holdsThroughout(.milliseconds(50)) {
                members.indices.allSatisfy { log.occurrences(of: .handler($0)) == 1 && log.occurrences(of: .completionBlock($0)) == 1 }
            }, "a member finished twice, or not at all: \(log.entries.value)")
            #expect(quick.allSatisfy { $0.responseData?.count == 10 })
            #expect(slow.allSatisfy { ($0.error as? TransferError)?.isCancellation == true })
            #expect(slow.allSatisfy { $0.isCancelled })
            batch.cancel()  // after the end: nothing more happens
            #expect(await holdsThroughout(.milliseconds(20)) { probe.completions == 1 })
        }
    }

    /// The task awaiting the results is cancelled while the members run: it throws
    /// `CancellationError` at once, the members are cancelled and each finishes exactly once, and
    /// the batch completion still runs.
    @Test("the awaiting task cancelled: members cancelled, CancellationError", arguments: BackendConfiguration.allCases)
    func awaitingTaskCancelled(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let log = OrderLog()
            let members = try (0..<5).map { log.instrument(try get(.delay(60_000), on: engine), as: $0) }
            let probe = BatchProbe()
            let batch = OperationBatch(of: members, progress: probe.progress, completion: probe.completion)
            let queue = OperationQueue()
            queue.enqueue(batch.operations)
            let waiting = Task { try await batch.results() }
            #expect(await waitUntil { members.allSatisfy(\.isExecuting) })
            waiting.cancel()
            await #expect(throws: CancellationError.self) { _ = try await waiting.value }
            await probe.expectCompleted(with: members)
            #expect(members.allSatisfy { ($0.error as? TransferError)?.isCancellation == true })
            #expect(members.indices.allSatisfy { log.occurrences(of: .handler($0)) == 1 })
            // A task that was already cancelled when it asked gets the results: they are all there.
            let late = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await batch.results()
            }
            #expect(try await late.value.count == 5)
        }
    }

    /// A task cancelled before it starts waiting still cancels the members and throws.
    @Test("a task cancelled before awaiting", arguments: BackendConfiguration.allCases)
    func cancelledBeforeAwaiting(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let member = try get(.delay(60_000), on: engine)
            let batch = OperationBatch(of: [member])
            let waiting = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await batch.results()
            }
            await #expect(throws: CancellationError.self) { _ = try await waiting.value }
            #expect(member.isCancelled)
            let queue = OperationQueue()
            queue.enqueue(batch.operations)
            #expect(await waitUntil { batch.completionOperation.isFinished })
            #expect((member.error as? TransferError)?.isCancellation == true)
        }
    }

    /// `failFast: true`: the first failure (a refused connection) cancels the members still
    /// running, and the results come back in input order with their cancellation errors. Asked for
    /// after a failure was counted, fail-fast cancels at once.
    @Test("failFast cancels the rest at the first failure", arguments: BackendConfiguration.allCases)
    func failFast(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            for askLate in [false, true] {
                let slow = try (0..<4).map { _ in try get(.delay(60_000), on: engine) }
                let refused = get(try testServer().refusedURL, on: engine)
                let members = [slow[0], slow[1], refused, slow[2], slow[3]]
                let probe = BatchProbe()
                let batch = OperationBatch(of: members, progress: probe.progress, completion: probe.completion)
                let queue = OperationQueue()
                queue.enqueue(batch.operations)
                if askLate {
                    #expect(await waitUntil { probe.record.value.progress == [1] }, "the refused member is counted first")
                    #expect(await holdsThroughout(.milliseconds(50)) { slow.allSatisfy { !$0.isCancelled } },
                            "a failure alone cancels nothing")
                }
                let results = try await batch.results(failFast: true)
                #expect(results.count == 5)
                #expect(results[2].transferError?.code == .cannotConnectToHost, "\(results)")
                for index in [0, 1, 3, 4] {
                    #expect(results[index].transferError?.isCancellation == true, "\(index): \(results[index])")
                }
                await probe.expectCompleted(with: members)
            }
        }
    }

    /// Without fail-fast a failure cancels nothing: the other members succeed.
    @Test("without failFast a failure leaves the others alone", arguments: BackendConfiguration.allCases)
    func noFailFast(_ backend: BackendConfiguration) async throws {
        try await withEngine(on: backend.makeBatchScheduler()) { engine in
            let first = try get(.bytes(10), on: engine)
            let refused = get(try testServer().refusedURL, on: engine)
            let last = try get(.delay(100), on: engine)
            let batch = OperationBatch(of: [first, refused, last])
            let queue = OperationQueue()
            queue.enqueue(batch.operations)
            let results = try await batch.results()
            #expect(((try? results[0].get()) as? Data)?.count == 10)
            #expect(results[1].transferError?.code == .cannotConnectToHost)
            #expect(((try? results[2].get()) as? Data) == Data("delayed\n".utf8))
        }
    }
}
