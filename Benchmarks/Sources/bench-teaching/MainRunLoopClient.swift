import BenchCurlewRequest
import BenchKit
import CurlewRunLoop
import CurlewTransport

/// `main-runloop`, rejected design (a): every transfer's sockets and timer on the **main** thread's
/// run loop. One engine, C transfers in flight, on Curlew's own `RunLoopScheduler` bound to the main
/// loop (`RunLoopContext.main`, CFSocket sources like `curlew-runloop-engine`), which
/// the harness runs (`CFRunLoopRunInMode` on the main thread). Every curl callback, completion and
/// refill runs on the main thread, so the main thread's other work (here: the `lateness` tick) waits
/// behind them.
final class MainRunLoopClient: LoadClient {
    private let engine: TransferEngine
    private let request: TransferRequest
    let protocolCheck: ProtocolCheck
    var note: String? {
        self.protocolCheck.note(adding: "all transfers on the main run loop (CFSocket sources, like curlew-runloop-engine)")
    }

    /// Call on the main thread, which the harness then runs.
    init(options: BenchOptions) throws(ClientSetupError) {
        guard options.scenario != .batch else { throw .batchNotSupported }
        guard options.scenario != .stream else { throw .streamNotMeasured }
        self.request = try BenchRequest.make(options)
        self.protocolCheck = ProtocolCheck(options)
        var configuration = TransferEngine.Configuration()
        configuration.maximumConnectionsPerHost = options.connections
        self.engine = TransferEngine(scheduler: RunLoopScheduler(context: .main, sockets: .cfSocket), configuration: configuration)
    }

    func start(_ ticket: RequestTicket) {
        self.engine.makeTransfer(self.request, delegate: MainLoopTransfer(ticket: ticket, client: self)).start()
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.engine.shutdown(completion: completion)
    }
}

/// A main-loop transfer's delegate, called on the main thread: reports the end, starts the next.
private final class MainLoopTransfer: TransferDelegate {
    private let ticket: RequestTicket
    private let client: MainRunLoopClient

    init(ticket: RequestTicket, client: MainRunLoopClient) {
        self.ticket = ticket
        self.client = client
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        if let next = self.ticket.finish(RequestOutcome(result, check: self.client.protocolCheck)) {
            self.client.start(next)
        }
    }
}
