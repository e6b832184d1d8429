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
    /// context does not run, nothing completes. Here the network thread is kept busy by a block
    /// that waits for a semaphore: the transfer's bytes sit in the socket until the thread is free.
    @Test("1: a context that does not run completes nothing")
    func contextMustRun() async throws {
        let thread = NetworkThread(name: "Lesson1")
        let engine = TransferEngine(scheduler: RunLoopScheduler(thread: thread, sockets: .epollSource))
        let release = DispatchSemaphore(value: 0)
        let delegate = ThreadNotingDelegate()
        engine.makeTransfer(TransferRequest(url: try server().url(.bytes(10))), delegate: delegate).start()
        thread.perform { release.wait() }  // The context is now stopped.
        #expect(await holdsThroughout(.milliseconds(300)) { !delegate.isDone }, "completed while its thread was blocked")
        release.signal()
        #expect(await waitUntil { delegate.isDone })
        #expect(try delegate.result.value?.get().body?.count == 10)
        await engine.shutdown()
    }

    /// Lesson 2. A run loop with no input source returns at once, so a thread that only "runs its
    /// run loop" falls through. `do { run } while (true)` keeps the thread alive by spinning;
    /// adding a port (here, one end of a socketpair: `SocketPort()` would listen on 0.0.0.0)
    /// keeps `run` waiting instead.
    @Test("2: a run loop without a source returns at once; a loop spins, a port waits")
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
    }

    /// Lesson 3. The network thread is created once, lazily, named, and lives on.
    @Test("3: the network thread is made once, lazily, and named")
    func createdOnceLazilyNamed() async throws {
        let name = "Lesson3"
        let thread = NetworkThread(name: name)
        #expect(!thread.isStarted)
        #expect(!ProcessInspector.threadNames().contains(name), "created before first use")
        let engines = (0..<3).map { _ in TransferEngine(scheduler: RunLoopScheduler(thread: thread, sockets: .epollSource)) }
        for engine in engines {
            _ = try await engine.execute(TransferRequest(url: try server().url(.bytes(1))))
        }
        #expect(thread.isStarted)
        #expect(ProcessInspector.threadNames().filter { $0 == name }.count == 1)
        for engine in engines { await engine.shutdown() }
        #expect(ProcessInspector.threadNames().filter { $0 == name }.count == 1, "the thread must outlive its engines")
    }

    /// Lesson 4. All callbacks run on that one thread; with nothing to do it sleeps, so an idle wait
    /// costs a few wake-ups, not a spin.
    @Test("4: one thread runs every callback, and it sleeps while idle", arguments: SocketStrategy.allCases)
    func oneThreadSleepsWhenIdle(_ sockets: SocketStrategy) async throws {
        let thread = NetworkThread(name: "Lesson4")
        let engine = TransferEngine(scheduler: RunLoopScheduler(thread: thread, sockets: sockets))
        let delegates = (0..<20).map { _ in ThreadNotingDelegate() }
        for delegate in delegates {
            engine.makeTransfer(TransferRequest(url: try server().url(.bytes(50_000))), delegate: delegate).start()
        }
        #expect(await waitUntil { delegates.allSatisfy(\.isDone) })
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
