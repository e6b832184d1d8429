import BenchCurlewRequest
import BenchKit
import CurlewOperations
import CurlewTransport
import Foundation

/// `curlew-dispatch`, `curlew-runloop`, `curlew-runloop-epoll`: the same engine as the
/// `curlew-*-engine` clients, but every request is a `RequestOperation` on an `OperationQueue` with
/// `maxConcurrentOperationCount = C`, as an AFNetworking-style application uses it.
///
/// **Refill on completion**, not a queue pre-filled with N operations: each operation's completion
/// handler (on the library's default completion queue) adds the next operation. That keeps the
/// closed loop of the engine clients — C requests in flight, latency from admission to completion,
/// one object graph per request in flight — so the difference between `curlew-dispatch` and
/// `curlew-dispatch-engine` is exactly the operation layer: `Operation` state and its KVO-style
/// notifications, the queue's scheduling onto its threads, serializing on the processing queue and
/// the hop to the completion queue. A pre-filled queue would instead measure how Foundation's
/// `OperationQueue` handles N pending operations, hold N operations in memory (RSS growing with N),
/// and time each request from when it was enqueued, i.e. include its wait in the queue.
final class OperationClient: LoadClient {
    private let engine: TransferEngine
    private let request: TransferRequest
    private let queue: OperationQueue
    private let protocolCheck: ProtocolCheck
    /// The `batch` scenario's waves; `nil` in every other scenario.
    private let waves: Waves?
    var note: String? {
        if self.waves != nil {
            return "waves of C RequestOperations queued at once, no batch; the last handler of a wave starts the next"
        }
        return self.protocolCheck.note(adding: "RequestOperation on an OperationQueue (maxConcurrentOperationCount = C), refilled from each completion handler")
    }

    init(options: BenchOptions, backend: CurlewBackend) throws(ClientSetupError) {
        guard options.scenario != .stream else {
            throw .unsupported(note: "a RequestOperation hands its response serializer the whole body; Curlew streams bodies with engine.stream and the manager's stream(for:)")
        }
        self.request = try BenchRequest.make(options)
        self.engine = TransferEngine(
            scheduler: backend.makeScheduler(), configuration: BenchRequest.engineConfiguration(options))
        let queue = OperationQueue()
        queue.name = "bench.operations"
        queue.maxConcurrentOperationCount = options.concurrency
        self.queue = queue
        self.protocolCheck = ProtocolCheck(options)
        self.waves = options.scenario == .batch ? Waves(size: options.concurrency) : nil
    }

    func start(_ ticket: RequestTicket) {
        if let waves = self.waves {
            if let wave = waves.admitted(ticket) { self.startWave(wave, of: waves) }
            return
        }
        let operation = RequestOperation(request: self.request, engine: self.engine)
        operation.setCompletionHandlers(
            success: { [self] operation, object in
                self.protocolCheck.record(isHTTP2: operation.response?.metrics.httpVersion == .http2)
                let status = operation.response?.head.status.code ?? 0
                let bytes = (object as? Data)?.count ?? operation.response?.body?.count ?? 0
                self.finished(ticket, .response(status: status, bytes: bytes))
            },
            failure: { [self] _, error in
                self.finished(ticket, .failure(String(describing: error)))
            })
        self.queue.addOperation(operation)
    }

    /// Queues one wave of operations; the handler that ends the wave queues the next.
    private func startWave(_ tickets: [RequestTicket], of waves: Waves) {
        let remaining = WaveCountdown(tickets.count)
        let operations = tickets.map { ticket in
            let operation = RequestOperation(request: self.request, engine: self.engine)
            let ended: @Sendable (RequestOutcome) -> Void = { [self] outcome in
                waves.finish(ticket, outcome)
                if remaining.countDown() {
                    let next = waves.nextWave()
                    if !next.isEmpty { self.startWave(next, of: waves) }
                }
            }
            operation.setCompletionHandlers(
                success: { operation, object in
                    let status = operation.response?.head.status.code ?? 0
                    let bytes = (object as? Data)?.count ?? operation.response?.body?.count ?? 0
                    ended(.response(status: status, bytes: bytes))
                },
                failure: { _, error in ended(.failure(String(describing: error))) })
            return operation
        }
        self.queue.addOperations(operations, waitUntilFinished: false)
    }

    private func finished(_ ticket: RequestTicket, _ outcome: RequestOutcome) {
        if let next = ticket.finish(outcome) {
            self.start(next)
        }
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.queue.cancelAllOperations()
        self.engine.shutdown(completion: completion)
    }
}
