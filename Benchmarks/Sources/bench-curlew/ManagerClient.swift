import BenchCurlewRequest
import BenchKit
import Curlew
import Foundation

/// `curlew-dispatch-manager`, `curlew-dispatch-epoll-manager`, `curlew-runloop-epoll-manager`: what an application written with
/// async/await calls — `RequestOperationManager.response(for:as:)` awaited for `Data` and its response —
/// on the same engine configuration as the other Curlew clients. The async path runs straight over
/// the engine (no `RequestOperation`); the manager adds preparing the request (its default headers), its
/// retry and interceptor checks, status validation, the metrics and the task that awaits the result.
/// In the `stream` scenario it calls `stream(for:)` and reads the body chunk by chunk (see ``StreamedBody``).
///
/// C unstructured tasks each keep one request in flight: a task awaits a result, reports it, and
/// goes on with the ticket it is given back, as a loop of `try await` calls does.
final class ManagerClient: LoadClient {
    private let manager: RequestOperationManager
    private let request: TransferRequest
    private let streams: Bool
    private let protocolCheck: ProtocolCheck

    var note: String? {
        self.protocolCheck.note(adding: self.streams
            ? "RequestOperationManager: try await stream(for:), the body read chunk by chunk, one Task per request in flight"
            : "RequestOperationManager: try await response(for:as: Data.self), one Task per request in flight")
    }

    init(options: BenchOptions, backend: CurlewBackend) throws(ClientSetupError) {
        switch options.scenario {
        case .get, .stream, .post, .h2, .lateness: break
        case .batch: throw .batchNotSupported
        case .idle: throw .unsupported(note: "the idle scenario measures a client's own timers; the manager adds none to the operation clients")
        }
        self.request = try BenchRequest.make(options)
        self.streams = options.scenario == .stream
        let engine = TransferEngine(scheduler: backend.makeScheduler(), configuration: BenchRequest.engineConfiguration(options))
        self.manager = RequestOperationManager(engine: engine)
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
                let outcome = await (self.streams ? self.streamOne() : self.fetchOne())
                next = current.finish(outcome)
            }
        }
    }

    /// One request, its body decoded as `Data`.
    private func fetchOne() async -> RequestOutcome {
        do {
            let reply = try await self.manager.response(for: self.request, as: Data.self)
            self.protocolCheck.record(isHTTP2: reply.metrics.httpVersion == .http2)
            return .response(status: reply.status.code, bytes: reply.value.count)
        } catch {
            return .failure(String(describing: error))
        }
    }

    /// One request, its body streamed.
    private func streamOne() async -> RequestOutcome {
        do {
            return await StreamedBody.read(try await self.manager.stream(for: self.request))
        } catch {
            return .failure(String(describing: error))
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
