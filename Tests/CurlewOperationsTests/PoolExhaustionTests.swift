import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// On Linux libdispatch's global pool has about two threads per CPU and hardly grows when they
/// block. Nothing on the way to an operation's finish uses that pool — the network context is a
/// serial queue or a thread, the processing queues are serial — so operations finish even while
/// other code has blocked every pool thread (for example `BlockOperation`s waiting for results).
///
/// The check runs in a child process (an exit test): blocking the pool also stops Swift's
/// cooperative threads, which would stall every other test running in parallel.
@Suite("RequestOperation: an exhausted dispatch pool")
struct PoolExhaustionTests {
    @Test("operations finish while every pool thread is blocked", arguments: BackendConfiguration.allCases)
    func finishWithExhaustedPool(_ backend: BackendConfiguration) async {
        let name: String = backend.rawValue
        await #expect(processExitsWith: .success) { [name = name as String] in
            guard let backend = BackendConfiguration(rawValue: name) else { failChildProcess("unknown backend \(name)") }
            PoolExhaustionTests.exhaustThePoolAndFinish(backend)
        }
    }

    /// Blocks every pool thread, runs eight operations, and exits with a failure if they did not
    /// all finish within ten seconds.
    ///
    /// Whether the pool really was exhausted is checked too (a block on another concurrent queue
    /// must not have run meanwhile). libdispatch's monitor adds pool threads now and then when the
    /// ones it has are blocked, so on a loaded machine that premise can fail without any fault of
    /// the operations: such a round proves nothing, and the next blocks twice as many threads, up to
    /// three rounds.
    static func exhaustThePoolAndFinish(_ backend: BackendConfiguration) {
        guard let server = try? TestServer.start() else { failChildProcess("no test server") }
        let engine = TransferEngine(scheduler: backend.makeScheduler())
        var blockers = 4 * ProcessInfo.processInfo.activeProcessorCount + 8
        var exhausted = false
        for _ in 0..<3 where !exhausted {
            let round = self.finishEightOperations(on: engine, server: server, blockingThreads: blockers)
            // Nothing of the round may still be alive when the process exits: LeakSanitizer (under
            // `Scripts/leaks.sh`) reports what it cannot reach at exit, and it cannot follow a
            // reference that Swift stores with an enum's tag in the pointer's spare bits, as `Data`
            // does for its storage — so a finished operation still held by a pending notification
            // block made its response body look leaked (19 child runs in 200 on a loaded machine).
            // The operations are released once their last hand-offs have run.
            let released = blockingWaitUntil(timeout: .seconds(10)) { round.released.allSatisfy { $0() } }
            guard released else { failChildProcess("a finished operation was never released") }
            exhausted = round.exhausted
            blockers *= 2
        }
        guard exhausted else { failChildProcess("the premise failed three times: a block on a concurrent queue ran meanwhile") }
        let shutDown = DispatchSemaphore(value: 0)
        engine.shutdown { shutDown.signal() }
        guard shutDown.wait(timeout: .now() + 10) == .success else { failChildProcess("the engine did not shut down") }
    }

    /// One round: `blockingThreads` blocks wait on the pool while eight operations run; fails the
    /// process if they do not finish or deliver the wrong bodies; returns whether the pool stayed
    /// exhausted throughout, and for each operation whether it has been released (a weak reference).
    /// The round ends only when every block it queued has run.
    private static func finishEightOperations(
        on engine: TransferEngine, server: TestServer, blockingThreads blockers: Int
    ) -> (exhausted: Bool, released: [@Sendable () -> Bool]) {
        let route = Route.bytes(1_000)
        let operations = (0..<8).map { _ in RequestOperation(request: TransferRequest(url: server.url(route)), engine: engine) }
        let release = DispatchSemaphore(value: 0)
        let queued = DispatchGroup()
        let blocking = DispatchQueue(label: "blocking", attributes: .concurrent)
        for _ in 0..<blockers { blocking.async(group: queued) { release.wait() } }
        let poolProbeRan = Locked(false)
        DispatchQueue(label: "pool-probe", attributes: .concurrent).async(group: queued) { poolProbeRan.set(true) }

        for operation in operations { operation.start() }
        let finished = blockingWaitUntil(timeout: .seconds(10)) { operations.allSatisfy(\.isFinished) }
        let exhausted = !poolProbeRan.value
        for _ in 0..<blockers { release.signal() }
        guard queued.wait(timeout: .now() + 30) == .success else { failChildProcess("the released blocks did not end") }

        guard finished else { failChildProcess("the operations waited for the blocked pool") }
        let expected = Data(TestServer.expectedBody(count: 1_000))
        guard operations.allSatisfy({ $0.responseData == expected }) else { failChildProcess("wrong bodies") }
        return (exhausted, operations.map { operation in { [weak operation] in operation == nil } })
    }
}

