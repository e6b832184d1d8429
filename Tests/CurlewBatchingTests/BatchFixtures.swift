import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

enum BatchFixtures {
    /// The batching tests' own network contexts: a thousand transfers here never queue behind, or
    /// in front of, another target's on `NetworkThread.shared`.
    static let contexts = PrivateContexts(name: "BatchTests")
}

/// A GET of `url` on `engine`, not started.
func get(_ url: URL, on engine: TransferEngine) -> RequestOperation {
    RequestOperation(request: TransferRequest(url: url), engine: engine)
}

/// A GET of a test server route on `engine`, not started.
func get(_ route: Route, on engine: TransferEngine) throws -> RequestOperation {
    get(try testServer().url(route), on: engine)
}

extension BackendConfiguration {
    /// A new scheduler of this configuration on the batching tests' own contexts.
    func makeBatchScheduler() -> any TransferScheduler {
        self.makeScheduler(in: BatchFixtures.contexts)
    }

    /// A configuration of the other kind, for members on a second backend in the same batch: the
    /// run loop (epoll) beside dispatch, dispatch beside either run loop.
    var other: BackendConfiguration {
        switch self {
        case .dispatch, .dispatchEpoll: return .runLoopEpoll
        case .runLoopCFSocket, .runLoopEpoll: return .dispatch
        }
    }
}

/// What ran, in the order it ran: members' own completions, the batch's progress and completion.
final class OrderLog: Sendable {
    enum Entry: Hashable, Sendable, CustomStringConvertible {
        /// Member `i`'s success or failure handler.
        case handler(Int)
        /// Member `i`'s `completionBlock`.
        case completionBlock(Int)
        /// The batch's progress, with the count.
        case progress(Int)
        /// The batch completion.
        case completion
        /// An operation that depends on the batch's completion operation.
        case dependant

        var description: String {
            switch self {
            case .handler(let index): return "handler \(index)"
            case .completionBlock(let index): return "completionBlock \(index)"
            case .progress(let count): return "progress \(count)"
            case .completion: return "completion"
            case .dependant: return "dependant"
            }
        }
    }

    let entries = Locked<[Entry]>([])

    func append(_ entry: Entry) {
        self.entries.withLock { $0.append(entry) }
    }

    /// Where `entry` first appears.
    func position(of entry: Entry) -> Int? {
        self.entries.value.firstIndex(of: entry)
    }

    /// How many times `entry` appears.
    func occurrences(of entry: Entry) -> Int {
        self.entries.value.filter { $0 == entry }.count
    }

    /// The progress counts, in the order they were reported.
    var progress: [Int] {
        self.entries.value.compactMap { entry in
            if case .progress(let count) = entry { return count }
            return nil
        }
    }

    /// Logs `operation`'s handler and `completionBlock` as member `index`; returns it.
    @discardableResult
    func instrument(_ operation: RequestOperation, as index: Int, completionQueue: DispatchQueue? = nil) -> RequestOperation {
        if let completionQueue { operation.completionQueue = completionQueue }
        operation.setCompletionHandlers(success: { _, _ in
            self.append(.handler(index))
        }, failure: { _, _ in
            self.append(.handler(index))
        })
        operation.completionBlock = { self.append(.completionBlock(index)) }
        return operation
    }
}

/// A batch's progress and completion, recorded (with checks that they ran on the batch's queue,
/// one at a time).
final class BatchProbe: Sendable {
    struct Record: Sendable {
        var progress: [Int] = []
        var totals: Set<Int> = []
        var completions = 0
        var completedWith: [ObjectIdentifier] = []
        var offQueue = 0
        var overlapping = 0
        var running = false
    }

    let record = Locked(Record())
    let queue: MarkedQueue?

    /// - Parameter queue: The queue the batch was given, checked for every callback (none: the
    ///   default queue, checked not to be the main thread).
    init(queue: MarkedQueue? = nil) {
        self.queue = queue
    }

    /// The batch's progress closure.
    var progress: @Sendable (Int, Int) -> Void {
        { finished, total in
            self.enter()
            self.record.withLock {
                $0.progress.append(finished)
                $0.totals.insert(total)
            }
            self.leave()
        }
    }

    /// The batch's completion closure.
    var completion: @Sendable ([Operation]) -> Void {
        { operations in
            self.enter()
            self.record.withLock {
                $0.completions += 1
                $0.completedWith = operations.map(ObjectIdentifier.init)
            }
            self.leave()
        }
    }

    private func enter() {
        let offQueue = self.queue.map { !$0.isCurrent } ?? Thread.isMainThread
        self.record.withLock {
            if $0.running { $0.overlapping += 1 }
            $0.running = true
            if offQueue { $0.offQueue += 1 }
        }
    }

    private func leave() {
        self.record.withLock { $0.running = false }
    }

    var completions: Int { self.record.value.completions }

    /// Waits for the completion, then checks that it came once, with `members`, after progress
    /// 1...total exactly (nothing for an empty batch), every callback on the right queue, one at a
    /// time.
    func expectCompleted(with members: [Operation], sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(await waitUntil { self.completions >= 1 }, "the batch never completed", sourceLocation: sourceLocation)
        #expect(await holdsThroughout(.milliseconds(20)) { self.completions == 1 }, "the completion ran twice",
                sourceLocation: sourceLocation)
        let record = self.record.value
        #expect(record.progress == Array(stride(from: 1, through: members.count, by: 1)), sourceLocation: sourceLocation)
        #expect(record.totals == (members.isEmpty ? [] : [members.count]), sourceLocation: sourceLocation)
        #expect(record.completedWith == members.map(ObjectIdentifier.init), sourceLocation: sourceLocation)
        #expect(record.offQueue == 0, "a callback ran off the batch's queue", sourceLocation: sourceLocation)
        #expect(record.overlapping == 0, "two callbacks ran at once", sourceLocation: sourceLocation)
    }
}

extension TransferError {
    /// Whether this is a cancellation.
    var isCancellation: Bool { self.code == .cancelled }
}

extension OperationBatch.MemberResult {
    /// The failure as a transfer error, if it is one.
    var transferError: TransferError? {
        guard case .failure(let error as TransferError) = self else { return nil }
        return error
    }
}
