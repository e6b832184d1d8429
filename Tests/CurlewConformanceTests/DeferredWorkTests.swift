import CurlewTestSupport
import CurlewTransport
import Dispatch
import Foundation
import Testing

/// `TransferEngine.runAfterCurrentEvents(_:)`: how an operation's hand-off to a processing queue
/// waits for the events the context has in hand, so that responses completed together are handed
/// over together. Every backend queues the work behind what its context already holds.
@Suite("Work deferred to the end of the context's current events")
struct DeferredWorkTests {
    @Test("on the context it runs there once, after the work queued before it, never inside the call",
          arguments: BackendConfiguration.allCases)
    func afterQueuedWork(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let log = Locked<[String]>([])
            let gate = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            // Hold the context so that both blocks below are queued before the first one runs.
            engine.scheduler.perform { gate.wait() }
            engine.scheduler.perform {
                engine.runAfterCurrentEvents {
                    log.withLock { $0.append(engine.scheduler.isOnContext ? "first" : "first, off the context") }
                }
                engine.runAfterCurrentEvents {
                    log.withLock { $0.append("second") }
                    done.signal()
                }
                log.withLock { $0.append("calls returned") }
            }
            engine.scheduler.perform { log.withLock { $0.append("queued before") } }
            gate.signal()
            #expect(await waitUntil { done.wait(timeout: .now()) == .success })
            await engine.settle()
            #expect(log.value == ["calls returned", "queued before", "first", "second"])
        }
    }

    @Test("off the context it runs at once", arguments: BackendConfiguration.allCases)
    func offTheContext(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let ran = Locked(0)
            engine.runAfterCurrentEvents { ran.withLock { $0 += 1 } }
            #expect(ran.value == 1)
        }
    }

    @Test("work deferred just before the engine shuts down runs once, before the shutdown completes",
          arguments: BackendConfiguration.allCases)
    func beforeShutdown(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeScheduler())
        let log = Locked<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        let shutDown = DispatchSemaphore(value: 0)
        engine.scheduler.perform { gate.wait() }
        // Deferred work whose own turn is queued behind the shutdown: the shutdown must run it.
        engine.scheduler.perform {
            engine.runAfterCurrentEvents { log.withLock { $0.append("deferred") } }
        }
        engine.shutdown {
            log.withLock { $0.append("shut down") }
            shutDown.signal()
        }
        gate.signal()
        #expect(await waitUntil { shutDown.wait(timeout: .now()) == .success })
        #expect(log.value == ["deferred", "shut down"])
    }
}
