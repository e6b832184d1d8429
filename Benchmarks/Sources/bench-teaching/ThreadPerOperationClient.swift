import BenchCurlewRequest
import BenchKit
import CurlewTransport
import Foundation

/// `thread-per-operation`, rejected design (b): every request gets a **new thread** that spins its
/// own run loop with its **own engine** (so its own curl multi handle and connection: nothing is
/// shared between operations, no connection is reused). Threads, memory and connection set-ups
/// grow with concurrency.
///
/// Unlike the article's threads, which never exit and escape any pool's control, these end once
/// their transfer is done and their engine shut down, so the process ends cleanly and `threadsPeak`
/// shows the growth with concurrency rather than with the request count. ``shutdown(_:)`` cancels
/// the transfers still running and waits for their threads to end.
///
/// `@unchecked Sendable`: `live`, `isShuttingDown` and `shutdownCompletion` are guarded by `lock`;
/// the rest is immutable.
final class ThreadPerOperationClient: LoadClient, @unchecked Sendable {
    private let request: TransferRequest
    private let configuration: TransferEngine.Configuration
    private let lock = NSLock()
    private var live: [ObjectIdentifier: OperationThread] = [:]
    private var isShuttingDown = false
    private var shutdownCompletion: (@Sendable () -> Void)?
    let protocolCheck: ProtocolCheck
    var note: String? {
        self.protocolCheck.note(
            adding: "a new thread with its own run loop and engine per request (no connection reuse); threads exit when their request is done")
    }

    init(options: BenchOptions) throws(ClientSetupError) {
        guard options.scenario != .batch else { throw .batchNotSupported }
        guard options.scenario != .stream else { throw .streamNotMeasured }
        self.request = try BenchRequest.make(options)
        self.protocolCheck = ProtocolCheck(options)
        var configuration = TransferEngine.Configuration()
        configuration.maximumConnectionsPerHost = 1
        self.configuration = configuration
    }

    func start(_ ticket: RequestTicket) {
        let operation = OperationThread(request: self.request, configuration: self.configuration, ticket: ticket, client: self)
        let refused: Bool = self.lock.withLock {
            if self.isShuttingDown { return true }
            self.live[ObjectIdentifier(operation)] = operation
            return false
        }
        if refused {
            ticket.finish(.failure("client shut down"))
            return
        }
        let thread = Thread { operation.run() }
        thread.name = "bench.operation"
        thread.start()
    }

    /// Called by an operation's thread as its last act.
    func operationEnded(_ operation: OperationThread) {
        let completion: (@Sendable () -> Void)? = self.lock.withLock {
            self.live.removeValue(forKey: ObjectIdentifier(operation))
            guard self.isShuttingDown, self.live.isEmpty else { return nil }
            defer { self.shutdownCompletion = nil }
            return self.shutdownCompletion
        }
        completion?()
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        let running: [OperationThread]? = self.lock.withLock {
            self.isShuttingDown = true
            if self.live.isEmpty { return nil }
            self.shutdownCompletion = completion
            return Array(self.live.values)
        }
        guard let running else {
            completion()
            return
        }
        for operation in running { operation.cancel() }
    }
}
