import CurlewTransport
import Dispatch
import Testing

/// Blocks an engine's network context until released: nothing completes meanwhile, so a test can
/// look at an operation between two steps without racing its transfer.
///
/// A run-loop engine held so must run on a network thread of its target's own (``PrivateContexts``):
/// other suites' synchronous tests block cooperative threads while they wait for
/// `NetworkThread.shared`, and holding that thread could leave none to release it.
public final class ContextGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = Locked(false)
    private let released = Locked(false)

    /// Holds `engine`'s context; returns once it is held.
    public static func hold(_ engine: TransferEngine) async -> ContextGate {
        let gate = ContextGate()
        engine.scheduler.perform {
            gate.entered.set(true)
            _ = gate.semaphore.wait(timeout: .now() + 60)
        }
        #expect(await waitUntil { gate.entered.value }, "the context never ran the gate")
        return gate
    }

    /// Lets the context run again (idempotent).
    public func release() {
        let first = self.released.withLock { released -> Bool in
            defer { released = true }
            return !released
        }
        if first { self.semaphore.signal() }
    }
}
