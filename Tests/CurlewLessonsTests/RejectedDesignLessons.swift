import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// LESSONS.md 6: the two designs article 001 rejects, run beside Curlew's, each in a child process
/// of its own (an exit test) so that thread counts, memory and timing see no other test.
@Suite("Lessons: the rejected designs")
struct RejectedDesignLessons {
    /// The designs of lesson 6a: where the transfers' work runs, relative to the "main" thread.
    enum MainThreadDesign: String, CaseIterable {
        /// Rejected: the transfers are scheduled on the main thread's own run loop.
        case mainRunLoop = "main-runloop"
        /// Curlew: `RunLoopScheduler()`, on the shared network thread.
        case networkThread = "network-thread"
        /// Curlew: `DispatchScheduler()`, on a serial queue.
        case delegateQueue = "delegate-queue"
    }

    /// Lesson 6a. Everything on the main run loop: under many concurrent requests the main thread
    /// is busy with them and its other work waits.
    ///
    /// A `NetworkThread` named `Main` stands in for the main thread: its run loop runs for ever,
    /// and its other work is a timer that should fire every millisecond. From that thread 64
    /// transfers are started and kept in flight (each completion starts the next) until 2,000 have
    /// completed. Each design's scheduler is wrapped so that every piece of network work (socket
    /// and timer events, performed blocks) is timed on the main thread. With the transfers on the
    /// main run loop, all of their work runs there and ticks that fell due meanwhile fire only once
    /// it is done: late because of it. With either Curlew backend no network work runs on the main
    /// thread, so no tick waits for it. Each tick's lateness is printed (median and p99), not
    /// asserted: on a shared machine it is a timing; which thread did the work is a fact.
    @Test("6a: on the main run loop the main thread's other work waits; not with either Curlew backend")
    func mainRunLoop() async throws {
        let child = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            print(await RejectedDesignLessons.mainThreadFacts())
        }
        let facts = ChildFacts.parse(child?.standardOutputContent ?? [])
        print("lesson 6a: \(facts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        func number(_ design: MainThreadDesign, _ key: String) -> Int? { facts["\(design.rawValue)-\(key)"].flatMap { Int($0) } }
        for design in MainThreadDesign.allCases {
            #expect(number(design, "requests") ?? 0 >= 2_000, "\(design.rawValue): \(facts)")
            #expect(number(design, "failed") == 0, "\(design.rawValue): \(facts)")
            #expect(number(design, "network-work") ?? 0 > 0, "\(design.rawValue): \(facts)")
        }
        #expect(number(.mainRunLoop, "network-work-on-main") == number(.mainRunLoop, "network-work"),
                "on the main run loop, all the network work runs on the main thread: \(facts)")
        #expect(number(.mainRunLoop, "ticks-delayed-by-network-work") ?? 0 >= 1,
                "no tick of the main thread waited for network work: \(facts)")
        for design in [MainThreadDesign.networkThread, .delegateQueue] {
            #expect(number(design, "network-work-on-main") == 0, "\(design.rawValue) did network work on the main thread: \(facts)")
            #expect(number(design, "context-calls-on-main") == 0, "\(design.rawValue) drove curl from the main thread: \(facts)")
            #expect(number(design, "ticks-delayed-by-network-work") == 0, "\(design.rawValue): \(facts)")
        }
    }

    /// The child of lesson 6a.
    static func mainThreadFacts() async -> String {
        var facts = ChildFacts()
        guard let url = try? testServer().url(.bytes(100)) else { return facts.line(failing: "no test server") }
        for design in MainThreadDesign.allCases {
            let main = NetworkThread(name: "Main.\(design.rawValue)")
            main.start()
            guard let mainID = main.threadID else { return facts.line(failing: "no main thread") }
            let base: any TransferScheduler =
                switch design {
                case .mainRunLoop: RunLoopScheduler(thread: main)
                case .networkThread: RunLoopScheduler()
                case .delegateQueue: DispatchScheduler(label: "lesson6a")
                }
            let scheduler = ObservedScheduler(base, watching: mainID)
            var configuration = TransferEngine.Configuration()
            configuration.maximumConnectionsPerHost = 64
            let engine = TransferEngine(scheduler: scheduler, configuration: configuration)
            let ticks = TickProbe(on: main)
            _ = await waitUntil { ticks.ticks.value.count >= 10 }
            let load = SteadyLoad(engine: engine, url: url)
            let loadStart = Date.timeIntervalSinceReferenceDate
            main.perform { load.start(64) }  // the main thread starts the transfers, as an app would
            _ = await waitUntil { load.completed >= 2_000 }
            load.stop()
            let loadEnd = Date.timeIntervalSinceReferenceDate
            _ = await waitUntil { load.inFlight == 0 }
            ticks.stop()
            await engine.shutdown()

            let log = scheduler.log.value
            let during = ticks.ticks.value.filter { $0.due >= loadStart && $0.due <= loadEnd }
            let delayed = during.filter { tick in
                log.spans.contains { $0.start <= tick.due && tick.due < $0.end && tick.fired >= $0.end }
            }
            let lateness = during.map { ($0.fired - $0.due) * 1_000_000 }.sorted()
            func percentile(_ fraction: Double) -> Int {
                lateness.isEmpty ? -1 : Int(lateness[min(lateness.count - 1, Int(Double(lateness.count) * fraction))])
            }
            let name = design.rawValue
            facts["\(name)-requests"] = "\(load.completed)"
            facts["\(name)-failed"] = "\(load.failed)"
            facts["\(name)-network-work"] = "\(log.work)"
            facts["\(name)-network-work-on-main"] = "\(log.workOnWatchedThread)"
            facts["\(name)-context-calls-on-main"] = "\(log.callsOnWatchedThread)"
            facts["\(name)-ticks"] = "\(during.count)"
            facts["\(name)-ticks-delayed-by-network-work"] = "\(delayed.count)"
            facts["\(name)-tick-late-median-us"] = "\(percentile(0.5))"
            facts["\(name)-tick-late-p99-us"] = "\(percentile(0.99))"
        }
        return facts.line()
    }

    /// The designs of lesson 6b: where each operation's work runs.
    enum PerOperationDesign: String, CaseIterable, Codable {
        /// Rejected (the article's): each operation gets a thread of its own running a run loop
        /// that is kept alive for ever — here a new `NetworkThread` — and an engine on it.
        case threadPerOperation = "thread-per-operation"
        /// Curlew: each operation gets an engine of its own too, made with the defaults,
        /// `RunLoopScheduler()`: they all share the one network thread.
        case sharedNetworkThread = "shared-network-thread"
        /// Curlew: every operation on `Curlew.defaultEngine`, a `DispatchScheduler`.
        case delegateQueue = "delegate-queue"
    }

    /// Lesson 6b. A run-loop thread per operation: the thread never exits, no pool controls it, and
    /// threads and memory grow with concurrency.
    ///
    /// Each design runs in a fresh child process: after a warm-up, N operations at once (N = 20,
    /// then 80), each request answered after 300 ms so that all are in flight together. In the
    /// article's design every operation's thread runs its run loop for ever: after the operations
    /// finished and their engines shut down, N more threads are left in `/proc/self/task` for good
    /// (the count grows with N), and the resident memory grew with them. With Curlew the same
    /// operations — even with an engine each, made with the defaults — share the one network
    /// thread, or run on `Curlew.defaultEngine`'s queue and libdispatch's pool: a few threads at
    /// most, whatever N. Memory is compared loosely (resident set sizes move with the allocator).
    @Test("6b: a run-loop thread per operation leaves N threads for good; Curlew's operations share theirs")
    func threadPerOperation() async throws {
        var facts: [String: String] = [:]
        for design in PerOperationDesign.allCases {
            let name = design.rawValue
            let child = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) { [name = name as String] in
                print(await RejectedDesignLessons.perOperationFacts(name))
            }
            facts.merge(ChildFacts.parse(child?.standardOutputContent ?? [])) { $1 }
        }
        print("lesson 6b: \(facts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        func number(_ design: PerOperationDesign, _ count: Int, _ key: String) -> Int? {
            facts["\(design.rawValue)-\(count)-\(key)"].flatMap { Int($0) }
        }
        for count in Self.operationCounts {
            for design in PerOperationDesign.allCases {
                #expect(number(design, count, "succeeded") == count, "\(design.rawValue), \(count): \(facts)")
            }
            #expect(number(.threadPerOperation, count, "operation-threads-left") == count,
                    "every operation's thread is left running for good: \(facts)")
            #expect(number(.threadPerOperation, count, "threads-left") ?? 0 >= count, "\(facts)")
            for design in [PerOperationDesign.sharedNetworkThread, .delegateQueue] {
                #expect(number(design, count, "threads-added-in-flight") ?? .max <= 8,
                        "\(design.rawValue) made threads for \(count) operations: \(facts)")
                #expect(number(design, count, "threads-left") ?? .max <= 8, "\(design.rawValue), \(count): \(facts)")
            }
        }
        // Memory: 80 threads left behind hold their stacks and run loops.
        let rejected = number(.threadPerOperation, 80, "rss-kib") ?? 0
        let curlew = max(number(.sharedNetworkThread, 80, "rss-kib") ?? .max, number(.delegateQueue, 80, "rss-kib") ?? .max)
        #expect(rejected >= curlew + 80 * 16, "80 threads left behind hold at least 16 KiB each: \(facts)")
    }

    /// How many operations run at once in lesson 6b, after a warm-up of 5.
    static let operationCounts = [20, 80]

    /// The child of lesson 6b: one design, in a fresh process.
    static func perOperationFacts(_ name: String) async -> String {
        var facts = ChildFacts()
        guard let design = PerOperationDesign(rawValue: name) else { return facts.line(failing: "unknown design \(name)") }
        guard let url = try? testServer().url(.delay(300)) else { return facts.line(failing: "no test server") }
        func threadIDs() -> Set<Int32> { Set(ProcessInspector.threads().map(\.id)) }
        func residentKiB() -> Int { Int((ProcessInspector.residentMemory()?.current ?? 0) / 1024) }
        var serial = 0
        for count in [5] + Self.operationCounts {
            let threadsBefore = threadIDs()
            let memoryBefore = residentKiB()
            let operations = (0..<count).map { _ -> RequestOperation in
                serial += 1
                let request = TransferRequest(url: url)
                switch design {
                case .threadPerOperation:
                    let engine = TransferEngine(scheduler: RunLoopScheduler(thread: NetworkThread(name: "Op.\(serial)")))
                    return RequestOperation(request: request, engine: engine)
                case .sharedNetworkThread:
                    return RequestOperation(request: request, engine: TransferEngine(scheduler: RunLoopScheduler()))
                case .delegateQueue:
                    return RequestOperation(request: request)
                }
            }
            for operation in operations { operation.start() }
            _ = await waitUntil { operations.allSatisfy(\.isExecuting) || operations.contains(where: \.isFinished) }
            let threadsInFlight = threadIDs().subtracting(threadsBefore).count
            _ = await waitUntil { operations.allSatisfy(\.isFinished) }
            if design != .delegateQueue {
                for operation in operations { await operation.engine?.shutdown() }
            }
            let left = threadIDs().subtracting(threadsBefore)
            let phase = "\(design.rawValue)-\(count)"
            facts["\(phase)-succeeded"] = "\(operations.filter { $0.responseData?.count == 8 }.count)"
            facts["\(phase)-threads-added-in-flight"] = "\(threadsInFlight)"
            facts["\(phase)-threads-left"] = "\(left.count)"
            facts["\(phase)-operation-threads-left"] = "\(left.compactMap(ProcessInspector.threadName).filter { $0.hasPrefix("Op.") }.count)"
            facts["\(phase)-rss-kib"] = "\(residentKiB() - memoryBefore)"
        }
        return facts.line()
    }
}
