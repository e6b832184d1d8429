import BenchCurlewRequest
import BenchKit
import CurlewTransport

/// `curlew-dispatch-epoll-engine-async`, `curlew-runloop-epoll-engine-async`: the engine's async API,
/// `try await engine.execute(request)`, with nothing above it. Beside `curlew-*-engine` (the same
/// engine through a delegate) and `curlew-*-manager` (the manager's async path over the same engine),
/// it shows what the task and its continuation cost, apart from what the manager adds.
///
/// C unstructured tasks each keep one request in flight: a task awaits a response, reports it, and
/// goes on with the ticket it is given back, as a loop of `try await` calls does.
final class EngineAsyncClient: LoadClient {
    private let engine: TransferEngine
    private let request: TransferRequest
    private let protocolCheck: ProtocolCheck

    var note: String? {
        self.protocolCheck.note(adding: "try await engine.execute(request), one Task per request in flight")
    }

    init(options: BenchOptions, backend: CurlewBackend) throws(ClientSetupError) {
        switch options.scenario {
        case .get, .post, .h2, .lateness: break
        case .batch: throw .batchNotSupported
        case .idle: throw .unsupported(note: "the idle scenario measures a client's own timers; the async API adds none to the engine's")
        case .stream: throw .unsupported(note: "engine.execute returns the whole body; the curlew-*-engine clients stream it with engine.stream")
        }
        self.request = try BenchRequest.make(options)
        self.engine = TransferEngine(
            scheduler: backend.makeScheduler(), configuration: BenchRequest.engineConfiguration(options))
        self.protocolCheck = ProtocolCheck(options)
    }

    func start(_ ticket: RequestTicket) {
        Task { [self] in
            var next: RequestTicket? = ticket
            while let current = next {
                let outcome: RequestOutcome
                do {
                    let response = try await self.engine.execute(self.request)
                    self.protocolCheck.record(isHTTP2: response.metrics.httpVersion == .http2)
                    outcome = .response(status: response.head.status.code, bytes: response.body?.count ?? 0)
                } catch {
                    outcome = .failure(String(describing: error))
                }
                next = current.finish(outcome)
            }
        }
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.engine.shutdown(completion: completion)
    }
}
