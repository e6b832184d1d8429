import BenchCurlewRequest
import BenchKit
import Curlew
import Foundation

/// `curlew-dispatch-manager`, `curlew-dispatch-epoll-manager`, `curlew-runloop-epoll-manager`: what an application written with
/// async/await calls — `RequestOperationManager.task(for:as:)` awaited for `Data` and its response —
/// on the same engine configuration as the other Curlew clients. Every request is still a
/// `RequestOperation` on the manager's queue; the manager adds preparing the request (its default
/// headers), its serializer, the metrics and the task that awaits the result.
///
/// C unstructured tasks each keep one request in flight: a task awaits a result, reports it, and
/// goes on with the ticket it is given back, as a loop of `try await` calls does.
final class ManagerClient: LoadClient {
    private let manager: RequestOperationManager
    private let request: TransferRequest
    private let protocolCheck: ProtocolCheck

    var note: String? {
        self.protocolCheck.note(adding: "RequestOperationManager: try await task(for:as: Data.self).valueAndResponse, one Task per request in flight")
    }

    init(options: BenchOptions, backend: CurlewBackend) throws(ClientSetupError) {
        switch options.scenario {
        case .get, .post, .h2, .lateness: break
        case .batch: throw .batchNotSupported
        case .idle: throw .unsupported(note: "the idle scenario measures a client's own timers; the manager adds none to the operation clients")
        }
        self.request = try BenchRequest.make(options)
        let engine = TransferEngine(scheduler: backend.makeScheduler(), configuration: BenchRequest.engineConfiguration(options))
        self.manager = RequestOperationManager(engine: engine)
        self.manager.operationQueue.maxConcurrentOperationCount = options.concurrency
        // The manager's security policy decides TLS trust for every request it sends.
        if let caFile = options.caFile {
            var policy = SecurityPolicy()
            policy.trustedRootsFile = caFile
            self.manager.securityPolicy = policy
        }
        self.protocolCheck = ProtocolCheck(options)
    }

    func start(_ ticket: RequestTicket) {
        Task { [self] in
            var next: RequestTicket? = ticket
            while let current = next {
                let outcome: RequestOutcome
                do {
                    let (data, response) = try await self.manager.task(for: self.request, as: Data.self).valueAndResponse
                    self.protocolCheck.record(isHTTP2: response.metrics.httpVersion == .http2)
                    outcome = .response(status: response.head.status.code, bytes: data.count)
                } catch {
                    outcome = .failure(String(describing: error))
                }
                next = current.finish(outcome)
            }
        }
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        let manager = self.manager
        Task {
            await manager.shutdown()
            completion()
        }
    }
}
