import BenchCurlewRequest
import BenchKit
import CurlewBatching
import CurlewOperations
import CurlewTransport
import Foundation

/// `curlew-dispatch-batch`, `curlew-runloop-batch`, `curlew-runloop-epoll-batch`: the `batch`
/// scenario through `OperationBatch`. Each wave of C `RequestOperation`s (see ``Waves``) is one
/// batch with a progress closure, queued with its completion operation on an `OperationQueue`; the
/// batch completion starts the next wave. The same requests, handlers and queue as
/// `OperationClient` in that scenario, so the difference is the batch: wrapping each member's
/// completion, its group, the progress hops, the completion operation.
final class BatchClient: LoadClient {
    private let engine: TransferEngine
    private let request: TransferRequest
    private let queue: OperationQueue
    private let waves: Waves
    var note: String? {
        "each wave of C RequestOperations is one OperationBatch; the batch completion starts the next wave"
    }

    init(options: BenchOptions, backend: CurlewBackend) throws(ClientSetupError) {
        guard options.scenario == .batch else {
            throw .unsupported(note: "a batch client runs only the batch scenario")
        }
        self.request = try BenchRequest.make(options)
        self.engine = TransferEngine(
            scheduler: backend.makeScheduler(), configuration: BenchRequest.engineConfiguration(options))
        let queue = OperationQueue()
        queue.name = "bench.batches"
        queue.maxConcurrentOperationCount = options.concurrency
        self.queue = queue
        self.waves = Waves(size: options.concurrency)
    }

    func start(_ ticket: RequestTicket) {
        if let wave = self.waves.admitted(ticket) {
            self.startWave(wave)
        }
    }

    private func startWave(_ tickets: [RequestTicket]) {
        let members = tickets.map { ticket in
            let operation = RequestOperation(request: self.request, engine: self.engine)
            operation.setCompletionHandlers(
                success: { [waves = self.waves] operation, object in
                    let status = operation.response?.head.status.code ?? 0
                    let bytes = (object as? Data)?.count ?? operation.response?.body?.count ?? 0
                    waves.finish(ticket, .response(status: status, bytes: bytes))
                },
                failure: { [waves = self.waves] _, error in
                    waves.finish(ticket, .failure(String(describing: error)))
                })
            return operation
        }
        let batch = OperationBatch(of: members, progress: { _, _ in }, completion: { [self] _ in
            let next = self.waves.nextWave()
            if !next.isEmpty { self.startWave(next) }
        })
        self.queue.addOperations(batch.operations, waitUntilFinished: false)
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.queue.cancelAllOperations()
        self.engine.shutdown(completion: completion)
    }
}
