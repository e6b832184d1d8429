import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// Runs `body` with a manager on a new engine of `backend` (its own network thread for the
/// run-loop configurations) whose base URL is the test server's; afterwards shuts the manager
/// down, checks that no transfer is left, shuts the engine down and checks it left nothing behind.
func withManager(
    _ backend: BackendConfiguration,
    baseURL: URL? = nil,
    cookies: CookieStorage = .off,
    transport wrap: (TransferEngine) -> any TransferRunning = { $0 },
    _ body: (RequestOperationManager) async throws -> Void
) async throws {
    let engine = TransferEngine(scheduler: backend.makeIsolatedScheduler())
    let manager = RequestOperationManager(baseURL: try baseURL ?? testServer().baseURL, transport: wrap(engine), cookies: cookies)
    do {
        try await body(manager)
    } catch {
        await manager.shutdown()
        await engine.shutdown()
        throw error
    }
    await manager.shutdown()
    let before = await engine.diagnostics()
    #expect(before.liveTransfers == 0, "transfers still live when the test ended: \(before)")
    await engine.shutdown()
    let after = await engine.diagnostics()
    #expect(after.openSockets == 0, "sockets left after shutdown: \(after)")
    #expect(after.scheduler == SchedulerDiagnostics(), "scheduler holdings after shutdown: \(after.scheduler)")
}

/// ``withManager(_:baseURL:cookies:transport:_:)`` on a `CountingTransport` around the engine,
/// which `body` gets as well.
func withSpiedManager(
    _ backend: BackendConfiguration,
    _ body: (RequestOperationManager, CountingTransport) async throws -> Void
) async throws {
    var spy: CountingTransport?
    try await withManager(backend, transport: { engine in
        let counting = CountingTransport(engine)
        spy = counting
        return counting
    }) { api in
        try await body(api, try #require(spy))
    }
}

extension BackendConfiguration {
    /// A scheduler of this configuration whose context serves only these tests (the run-loop
    /// configurations get network threads of their own, not `NetworkThread.shared`).
    func makeIsolatedScheduler() -> any TransferScheduler {
        self.makeScheduler(in: IsolatedThreads.contexts)
    }

    /// The manager's backend for this configuration.
    var backend: Backend {
        switch self {
        case .dispatch: return .dispatch(sockets: .sourcePerSocket)
        case .dispatchEpoll: return .dispatch
        case .runLoopCFSocket: return .runLoop(sockets: .cfSocket)
        case .runLoopEpoll: return .runLoop
        }
    }
}

/// The manager tests' own network contexts (network threads live as long as the process).
enum IsolatedThreads {
    static let contexts = PrivateContexts(name: "ManagerTests")
}

/// What AFNetworking-style handlers received, and how often.
final class HandlerProbe: Sendable {
    struct Record: Sendable {
        var successes = 0
        var failures = 0
        var object: (any Sendable)?
        var error: (any Error)?
        var operationWasNil = false
    }

    let record = Locked(Record())

    var success: @Sendable (RequestOperation, (any Sendable)?) -> Void {
        { [record] _, object in
            record.withLock {
                $0.successes += 1
                $0.object = object
            }
        }
    }

    var failure: @Sendable (RequestOperation?, any Error) -> Void {
        { [record] operation, error in
            record.withLock {
                $0.failures += 1
                $0.error = error
                $0.operationWasNil = operation == nil
            }
        }
    }

    /// Waits for one handler call, then checks that no second one follows for a moment.
    func waitForOneCall(sourceLocation: SourceLocation = #_sourceLocation) async -> Record {
        #expect(await waitUntil { self.record.withLock { $0.successes + $0.failures >= 1 } }, "no handler ran",
                sourceLocation: sourceLocation)
        #expect(await holdsThroughout(.milliseconds(50)) { self.record.withLock { $0.successes + $0.failures == 1 } },
                "a handler ran twice", sourceLocation: sourceLocation)
        return self.record.value
    }
}

/// A transport that counts the calls it passes on to another: the seam used as a spy.
final class CountingTransport: TransferRunning, Sendable {
    struct Counts: Sendable, Hashable {
        var made = 0
        var starts = 0
        var cancels = 0
        var completions = 0
    }

    let base: any TransferRunning
    let counts = Locked(Counts())
    /// Calls of ``afterCurrentEvents(_:)``, passed on to the base.
    let deferrals = Locked(0)

    init(_ base: any TransferRunning) {
        self.base = base
    }

    func afterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        self.deferrals.withLock { $0 += 1 }
        self.base.afterCurrentEvents(work)
    }

    func makeTransfer(_ request: TransferRequest, observer: any TransferObserver) -> any TransferControl {
        self.counts.withLock { $0.made += 1 }
        let watcher = Observer(observer: observer, counts: self.counts)
        return Control(base: self.base.makeTransfer(request, observer: watcher), counts: self.counts)
    }

    private final class Control: TransferControl, Sendable {
        let base: any TransferControl
        let counts: Locked<Counts>

        init(base: any TransferControl, counts: Locked<Counts>) {
            self.base = base
            self.counts = counts
        }

        func start() {
            self.counts.withLock { $0.starts += 1 }
            self.base.start()
        }

        func cancel() {
            self.counts.withLock { $0.cancels += 1 }
            self.base.cancel()
        }

        func pause() { self.base.pause() }
        func resume() { self.base.resume() }
    }

    private final class Observer: TransferObserver, Sendable {
        let observer: any TransferObserver
        let counts: Locked<Counts>

        init(observer: any TransferObserver, counts: Locked<Counts>) {
            self.observer = observer
            self.counts = counts
        }

        func transferDidUpdate(_ progress: TransferProgress) {
            self.observer.transferDidUpdate(progress)
        }

        func transferDidComplete(with result: Result<TransferResponse, TransferError>) {
            self.counts.withLock { $0.completions += 1 }
            self.observer.transferDidComplete(with: result)
        }
    }
}

/// The server's view of a request, from `/echo`.
typealias Echo = EchoReply

extension ResponseSerializationError {
    /// The status code, when the status was refused.
    var refusedStatus: Int? {
        if case .unacceptableStatusCode(let code) = self.reason { return code }
        return nil
    }
}
