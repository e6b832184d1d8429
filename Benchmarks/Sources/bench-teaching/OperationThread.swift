import BenchKit
import CoreFoundation
import CurlewRunLoop
import CurlewTransport
import Foundation

/// One request of `thread-per-operation`, on a thread of its own: it builds a run loop, Curlew's
/// `RunLoopScheduler` on it (`RunLoopContext.currentThread()`, CFSocket sources) and an engine, runs the transfer, reports it (and starts the next
/// request, on yet another new thread), shuts its engine down and lets the thread end.
///
/// `@unchecked Sendable`: `transfer`, `isCancelled` and `isFinished` are guarded by `lock`; `loop`
/// is written on the operation's thread before anything can read it (the transfer starts after);
/// the rest is immutable.
final class OperationThread: TransferDelegate, @unchecked Sendable {
    private let request: TransferRequest
    private let configuration: TransferEngine.Configuration
    private let ticket: RequestTicket
    private let client: ThreadPerOperationClient
    private let lock = NSLock()
    private var transfer: Transfer?
    private var engine: TransferEngine?
    private var isCancelled = false
    private var isFinished = false
    private var loop: CFRunLoop?

    init(request: TransferRequest, configuration: TransferEngine.Configuration, ticket: RequestTicket,
         client: ThreadPerOperationClient) {
        self.request = request
        self.configuration = configuration
        self.ticket = ticket
        self.client = client
    }

    /// The thread's body: runs its own run loop until the engine has shut down.
    func run() {
        let loop = CFRunLoopGetCurrent()
        self.loop = loop
        // A run loop with nothing in its mode returns at once: a never-signalled source keeps it
        // running until the engine is done (the first blocks and sockets come later).
        var context = CFRunLoopSourceContext()
        context.perform = { _ in }
        let keepAlive = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
        if let keepAlive { CFRunLoopAddSource(loop, keepAlive, kCFRunLoopCommonModes) }

        let scheduler = RunLoopScheduler(context: .currentThread(), sockets: .cfSocket)
        let engine = TransferEngine(scheduler: scheduler, configuration: self.configuration)
        let transfer = engine.makeTransfer(self.request, delegate: self)
        let cancelled: Bool = self.lock.withLock {
            self.transfer = transfer
            self.engine = engine
            return self.isCancelled
        }
        transfer.start()
        if cancelled { transfer.cancel() }

        while !self.lock.withLock({ self.isFinished }) {
            _ = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1.0e10, false)
        }
        if let keepAlive { CFRunLoopSourceInvalidate(keepAlive) }
        self.lock.withLock {
            self.transfer = nil
            self.engine = nil
        }
        self.client.operationEnded(self)
    }

    /// Cancels the transfer (from any thread); the operation then ends as usual.
    func cancel() {
        let transfer: Transfer? = self.lock.withLock {
            self.isCancelled = true
            return self.transfer
        }
        transfer?.cancel()
    }

    /// On the operation's thread: report, start the next request, then take this engine down.
    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        if let next = self.ticket.finish(RequestOutcome(result, check: self.client.protocolCheck)) {
            self.client.start(next)
        }
        let engine = self.lock.withLock { self.engine }
        engine?.shutdown { [self] in
            // Runs on this operation's thread (the scheduler completes its shutdown there).
            self.lock.withLock { self.isFinished = true }
            if let loop = self.loop { CFRunLoopStop(loop) }
        }
    }
}
