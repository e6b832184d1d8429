import BenchCurlewRequest
import BenchKit
import CurlewTransport

/// `curlew-*-engine`: the transfer engine directly. Each request is
/// `engine.makeTransfer(request, delegate:).start()`; its delegate, called on the engine's context,
/// reports the end to the closed loop and starts the next transfer from there.
///
/// In the `stream` scenario each of the C in-flight slots is a `Task` that loops over
/// `engine.stream(request)`, reading each body chunk by chunk as it arrives (see ``StreamedBody``):
/// the engine's streaming, which has no delegate form.
final class EngineClient: LoadClient {
    private let engine: TransferEngine
    private let request: TransferRequest
    private let streams: Bool
    let protocolCheck: ProtocolCheck
    var note: String? {
        self.protocolCheck.note(adding: self.streams ? "engine.stream(request), the body read chunk by chunk, one Task per request in flight" : nil)
    }

    init(options: BenchOptions, backend: CurlewBackend) throws(ClientSetupError) {
        guard options.scenario != .batch else { throw .batchNotSupported }
        self.request = try BenchRequest.make(options)
        self.engine = TransferEngine(
            scheduler: backend.makeScheduler(), configuration: BenchRequest.engineConfiguration(options))
        self.streams = options.scenario == .stream
        self.protocolCheck = ProtocolCheck(options)
    }

    func start(_ ticket: RequestTicket) {
        if self.streams {
            Task { await self.streamBodies(from: ticket) }
            return
        }
        self.engine.makeTransfer(self.request, delegate: TimedTransfer(ticket: ticket, client: self)).start()
    }

    /// One in-flight slot of the `stream` scenario: a body at a time, the next as soon as this one is reported.
    private func streamBodies(from first: RequestTicket) async {
        var ticket = first
        while true {
            let outcome: RequestOutcome
            do {
                outcome = await StreamedBody.read(try await self.engine.stream(self.request))
            } catch {
                outcome = .failure(String(describing: error))
            }
            guard let next = ticket.finish(outcome) else { return }
            ticket = next
        }
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.engine.shutdown(completion: completion)
    }
}

/// One engine transfer's delegate: reports how it ended and starts the next, on the engine's context.
private final class TimedTransfer: TransferDelegate {
    private let ticket: RequestTicket
    private let client: EngineClient

    init(ticket: RequestTicket, client: EngineClient) {
        self.ticket = ticket
        self.client = client
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        let outcome: RequestOutcome
        switch result {
        case .success(let response):
            self.client.protocolCheck.record(isHTTP2: response.metrics.httpVersion == .http2)
            outcome = .response(status: response.head.status.code, bytes: response.body?.count ?? 0)
        case .failure(let error):
            outcome = .failure(error.description)
        }
        if let next = self.ticket.finish(outcome) {
            self.client.start(next)
        }
    }
}
