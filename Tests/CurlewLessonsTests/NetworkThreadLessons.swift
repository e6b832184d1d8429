@preconcurrency import CoreFoundation
import CurlewRunLoop
import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A run loop carried to another thread to be stopped.
///
/// Safety: `@unchecked Sendable` because the only call made with it off its thread is
/// `CFRunLoopStop`, which CoreFoundation documents as callable from any thread.
struct RunLoopHandle: @unchecked Sendable {
    let loop: CFRunLoop
}

/// LESSONS.md 1–5: the network thread of AFNetworking (`+networkRequestThread`), on Linux.
@Suite("Lessons: the network thread")
struct NetworkThreadLessons {
    /// Lesson 1. Callbacks are delivered by the context a transfer is scheduled on; while that
    /// context does not run, nothing completes. The transfer starts first: its request reaches the
    /// server, which answers a while later. Meanwhile the network thread is stopped by a block
    /// that waits for a semaphore; the server's record shows the answer sent, and the bytes sit in
    /// the socket until the thread is free. The premise — the transfer had not completed when the
    /// thread stopped — is read by the blocking block itself, on the network thread, so a test task
    /// that polls late cannot spoil it. (Should the machine be so slow that the answer beat the
    /// block, the attempt is made again with a longer delay, up to 27 s — never the claim's check. Run-loop
    /// only: the dispatch backend's twin is `Lessons: the delegate queue` → 1.)
    @Test("1: a context that does not run completes nothing")
    func contextMustRun() async throws {
        let server = try testServer()
        let thread = NetworkThread(name: "Lesson1")
        let engine = TransferEngine(scheduler: RunLoopScheduler(thread: thread, sockets: .epollSource))
        var shown = false
        for delay in [1_000, 3_000, 9_000, 27_000] where !shown {
            let release = DispatchSemaphore(value: 0)
            let doneWhenStopped = Locked<Bool?>(nil)
            let delegate = ThreadNotingDelegate()
            let tag = UUID().uuidString
            engine.makeTransfer(TransferRequest(url: server.url(.delay(delay))).tagged(tag), delegate: delegate).start()
            // As soon as the request is at the server, stop the thread (watched from a thread of
            // its own, so no test-task wake-up lies between the two).
            onOwnThread(when: { server.requests(tagged: tag).count == 1 }) {
                thread.perform {
                    doneWhenStopped.set(delegate.isDone)
                    release.wait()  // The context is now stopped.
                }
            }
            #expect(await waitUntil(timeout: .seconds(60)) { doneWhenStopped.value != nil },
                    "the request never reached the server, or the thread never ran the stopping block")
            guard let doneFirst = doneWhenStopped.value else {
                release.signal()  // recorded above; should the block still run, it must not block
                return
            }
            if doneFirst {
                release.signal()  // premise missed: the answer came before the thread stopped
                _ = await waitUntil { delegate.isDone }
                continue
            }
            #expect(await waitUntil(timeout: .seconds(60)) { server.requests(tagged: tag).first?.outcome == .answered },
                    "the server never answered")
            #expect(await holdsThroughout(.milliseconds(300)) { !delegate.isDone }, "completed while its thread was blocked")
            release.signal()
            #expect(await waitUntil { delegate.isDone })
            #expect(try delegate.result.value?.get().body == Data("delayed\n".utf8))
            shown = true
        }
        #expect(shown, "four times the answer came before the thread could be stopped")
        await engine.shutdown()
    }

    /// Lesson 2. A run loop with no input source returns at once, so a thread that only "runs its
    /// run loop" falls through. `do { run } while (true)` keeps the thread alive by spinning;
    /// adding a port (here, one end of a socketpair: `SocketPort()` would listen on 0.0.0.0)
    /// keeps `run` waiting instead. Curlew's `NetworkThread` does the port's job with a source over
    /// an `eventfd` that is never written (`KeepAlivePort`): its loop neither returns nor spins — for
    /// a second it uses no CPU and does not wake — and it still wakes for work. (About run loops, so
    /// no backend parameter: the dispatch backend has none to keep alive.)
    @Test("2: a run loop without a source returns at once; a loop spins, a port waits, Curlew's thread sleeps")
    func keepAliveStyles() async throws {
        // Without a source: run(mode:before:) returns false immediately, again and again.
        let spins = Locked(0)
        let stopSpinning = Locked(false)
        let spinner = Thread {
            while !stopSpinning.value {
                _ = RunLoop.current.run(mode: .default, before: .distantFuture)
                spins.withLock { $0 += 1 }
            }
        }
        spinner.start()
        #expect(await waitUntil { spins.value > 10_000 }, "do { run } while (true) without a source spins")
        stopSpinning.set(true)

        // With a port: run(mode:before:) sleeps until the port has something.
        var descriptors: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0)
        let portSocket = descriptors[0]
        let returns = Locked(0)
        let loop = Locked<RunLoopHandle?>(nil)
        let portThread = Thread {
            guard let port = SocketPort(protocolFamily: AF_UNIX, socketType: Int32(SOCK_STREAM.rawValue),
                                        protocol: 0, socket: portSocket) else { return }
            RunLoop.current.add(port, forMode: .default)
            loop.set(RunLoopHandle(loop: CFRunLoopGetCurrent()))
            _ = RunLoop.current.run(mode: .default, before: .distantFuture)
            returns.withLock { $0 += 1 }
            RunLoop.current.remove(port, forMode: .default)
        }
        portThread.start()
        #expect(await waitUntil { loop.value != nil })
        #expect(await holdsThroughout(.milliseconds(300)) { returns.value == 0 }, "run returned although a port was added")
        if let handle = loop.value { CFRunLoopStop(handle.loop) }
        #expect(await waitUntil { returns.value == 1 })
        close(descriptors[1])

        // Curlew's keep-alive: the thread sleeps in its loop, and wakes for work.
        let network = NetworkThread(name: "Lesson2")
        network.start()
        let id = try #require(network.threadID)
        let wakeUps = network.wakeUpCount
        let cpuBefore = try #require(ProcessInspector.cpuTime(ofThread: id))
        #expect(await holdsThroughout(.seconds(1)) { network.wakeUpCount == wakeUps }, "the idle loop woke up")
        let cpuUsed = try #require(ProcessInspector.cpuTime(ofThread: id)) - cpuBefore
        #expect(cpuUsed < .milliseconds(100), "the idle network thread used \(cpuUsed) of CPU in a second: it spins")
        let ran = Locked(false)
        network.perform { ran.set(true) }
        #expect(await waitUntil { ran.value })
        #expect(network.wakeUpCount > wakeUps, "it slept until the work came")
        #expect(ProcessInspector.threadName(id) == "Lesson2", "the thread is still there")
    }

    /// Lesson 3. The network thread is created once, lazily, named, and lives for the process.
    ///
    /// Checked with the default thread, `NetworkThread.shared`, in a child process of its own (an
    /// exit test): other suites of this process use `.shared` too, so only a fresh process can show
    /// it absent before first use. The child looks at `/proc/self/task`: no `Curlew.network` thread
    /// before first use, nor after `.shared` is merely accessed; exactly one after eight threads
    /// used it at once and three engines made with the defaults ran transfers on it (every callback
    /// on that thread); and after those engines shut down and were released, the same thread (same
    /// kernel id) is still there and serves a new engine. (Run-loop only: the dispatch backend has
    /// no thread of its own — lesson 7.)
    @Test("3: the network thread is made once, lazily, named, and lives on")
    func createdOnceLazilyNamed() async throws {
        let child = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            print(await NetworkThreadLessons.sharedThreadFacts())
        }
        let facts = ChildFacts.parse(child?.standardOutputContent ?? [])
        #expect(facts["before-use"] == "0", "\(facts)")
        #expect(facts["after-access"] == "0", "created on access, before any use: \(facts)")
        #expect(facts["after-concurrent-first-use"] == "1", "\(facts)")
        #expect(facts["after-three-engines"] == "1", "\(facts)")
        #expect(facts["callbacks-on-shared"] == "true", "\(facts)")
        #expect(facts["alive-after-engines-released"] == "true", "\(facts)")
        #expect(facts["new-engine-same-thread"] == "true", "\(facts)")
        #expect(facts["in-the-end"] == "1", "\(facts)")
    }

    /// The child of lesson 3: the facts about `NetworkThread.shared` in a fresh process.
    static func sharedThreadFacts() async -> String {
        var facts = ChildFacts()
        func count() -> Int { ProcessInspector.threadNames().filter { $0 == NetworkThread.defaultName }.count }
        facts["before-use"] = "\(count())"
        let shared = NetworkThread.shared
        facts["after-access"] = "\(count())"
        // First use from eight threads at once.
        DispatchQueue.concurrentPerform(iterations: 8) { _ in RunLoopScheduler().perform {} }
        facts["after-concurrent-first-use"] = "\(count())"

        guard let url = try? testServer().url(.bytes(10)) else { return facts.line(failing: "no test server") }
        func fetchOnNewEngine() async -> (engine: TransferEngine, threads: Set<Int32>) {
            let engine = TransferEngine(scheduler: RunLoopScheduler())
            let delegate = ThreadNotingDelegate()
            engine.makeTransfer(TransferRequest(url: url), delegate: delegate).start()
            _ = await waitUntil { delegate.isDone }
            return (engine, Set(delegate.threads.value))
        }
        var engines: [TransferEngine] = []
        var callbackThreads = Set<Int32>()
        for _ in 0..<3 {
            let (engine, threads) = await fetchOnNewEngine()
            engines.append(engine)
            callbackThreads.formUnion(threads)
        }
        facts["after-three-engines"] = "\(count())"
        let id = shared.threadID
        facts["callbacks-on-shared"] = "\(id != nil && callbackThreads == Set([id].compactMap { $0 }))"
        for engine in engines { await engine.shutdown() }
        engines = []
        facts["alive-after-engines-released"] = "\(id.flatMap(ProcessInspector.threadName) == NetworkThread.defaultName)"
        let (late, lateThreads) = await fetchOnNewEngine()
        facts["new-engine-same-thread"] = "\(id != nil && lateThreads == Set([id].compactMap { $0 }))"
        await late.shutdown()
        facts["in-the-end"] = "\(count())"
        return facts.line()
    }

    /// Lesson 4. All callbacks run on that one thread; with nothing to do it sleeps, so an idle wait
    /// costs a few wake-ups, not a spin. (Run-loop only, both socket strategies: it is about the
    /// network thread, which only that backend has. The twin on every backend is
    /// `Engine lifecycle` → *an idle engine makes no socket actions*.)
    @Test("4: one thread runs every callback, and it sleeps while idle", arguments: RunLoopScheduler.SocketStrategy.allCases)
    func oneThreadSleepsWhenIdle(_ sockets: RunLoopScheduler.SocketStrategy) async throws {
        let thread = NetworkThread(name: "Lesson4")
        let engine = TransferEngine(scheduler: RunLoopScheduler(thread: thread, sockets: sockets))
        let delegates = (0..<20).map { _ in ThreadNotingDelegate() }
        for delegate in delegates {
            engine.makeTransfer(TransferRequest(url: try server().url(.bytes(50_000))), delegate: delegate).start()
        }
        // Required: a thread that never ran the transfers would not answer the diagnostics below either.
        try #require(await waitUntil { delegates.allSatisfy(\.isDone) }, "the transfers never completed")
        let threads = Set(delegates.flatMap { $0.threads.value })
        #expect(threads == [try #require(thread.threadID)], "callbacks ran on \(threads)")

        let waiting = ThreadNotingDelegate()
        engine.makeTransfer(TransferRequest(url: try server().url(.delay(1000))), delegate: waiting).start()
        #expect(await waitUntil { await engine.diagnostics().openSockets >= 1 })
        let before = thread.wakeUpCount
        let waitStarted = ContinuousClock.now
        #expect(await waitUntil { waiting.isDone })
        let wakeUps = thread.wakeUpCount - before
        let seconds = (ContinuousClock.now - waitStarted) / .seconds(1)
        // A few wake-ups per second of waiting (curl's once-a-second idle check), never a spin.
        #expect(Double(wakeUps) <= 20 + 10 * seconds, "the idle network thread woke \(wakeUps) times in \(seconds) s")
        await engine.shutdown()
    }

    /// Lesson 5. Work is scheduled in a set of run-loop modes; a loop running in another mode does
    /// not serve it. (The first engine below can never be served, so it is left behind on purpose.)
    /// Run-loop only: a dispatch queue has no modes.
    @Test("5: a loop running in another mode does not serve the transfers")
    func modes() async throws {
        let url = try server().url(.bytes(10))
        let custom = RunLoop.Mode("CurlewLessonMode")

        let defaultModeThread = NetworkThread(name: "Lesson5a", runMode: .default)
        let unserved = TransferEngine(scheduler: RunLoopScheduler(thread: defaultModeThread, modes: [custom], sockets: .epollSource))
        let stuck = ThreadNotingDelegate()
        unserved.makeTransfer(TransferRequest(url: url), delegate: stuck).start()
        #expect(await holdsThroughout(.milliseconds(500)) { !stuck.isDone }, "served in a mode the thread does not run")

        let customModeThread = NetworkThread(name: "Lesson5b", runMode: custom)
        let served = TransferEngine(scheduler: RunLoopScheduler(thread: customModeThread, modes: [custom], sockets: .epollSource))
        #expect(try await served.execute(TransferRequest(url: url)).body?.count == 10)
        await served.shutdown()

        // Common modes include the default mode, which is what AFNetworking schedules in.
        let common = TransferEngine(scheduler: RunLoopScheduler(thread: defaultModeThread, modes: [.common], sockets: .epollSource))
        #expect(try await common.execute(TransferRequest(url: url)).body?.count == 10)
        await common.shutdown()
    }
}
