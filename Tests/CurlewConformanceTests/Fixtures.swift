import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

extension TransferEngine {
    /// Starts `request` with a recorder and waits for its one completion (counted after a settling
    /// transfer, so a late second completion would be seen).
    func run(_ request: TransferRequest, recorder: TransferRecorder? = nil) async throws -> (Result<TransferResponse, TransferError>, TransferRecorder) {
        let recorder = recorder ?? TransferRecorder(self)
        self.makeTransfer(request, delegate: recorder).start()
        let result = try #require(await recorder.result(), "the transfer never completed")
        await self.settle()
        #expect(recorder.completionCount == 1)
        #expect(recorder.events.value.callsOffContext == 0, "a delegate call ran off the engine's context")
        return (result, recorder)
    }

    /// Runs `request` and requires success.
    func fetch(_ request: TransferRequest) async throws -> TransferResponse {
        let (result, _) = try await self.run(request)
        return try result.get()
    }

    /// Runs `request` and requires failure.
    func failure(_ request: TransferRequest) async throws -> TransferError {
        let (result, _) = try await self.run(request)
        switch result {
        case .success(let response):
            Issue.record("expected a failure, got \(response.head.status)")
            throw CancellationError()
        case .failure(let error):
            return error
        }
    }
}

extension EchoReply {
    /// Decodes the `/echo` reply in a response body.
    init(_ response: TransferResponse) throws {
        self = try JSONDecoder().decode(EchoReply.self, from: try #require(response.body))
    }
}
