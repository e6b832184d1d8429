import Curlew
import CurlewOpenAPI
import CurlewTestServer
import CurlewTestSupport
import Foundation
import OpenAPIRuntime
import Testing

/// Cancelling a generated client's call, or giving up on its response body, cancels the transfer: the
/// server sees the client leave (its tagged request is abandoned), and no transfer is left
/// (``withClient(_:configuration:middlewares:sourceLocation:_:)`` checks the engine afterwards).
@Suite("OpenAPI transport: cancellation")
struct CancellationTests {
    /// How a reader gives up on a response body after its first chunk.
    enum GivingUp: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The task reading the body is cancelled.
        case cancelReader = "cancel-reader"
        /// The body is dropped without being read to its end.
        case dropBody = "drop-body"

        var testDescription: String { self.rawValue }
    }

    @Test("cancelling the call before the response head cancels the transfer", arguments: BackendConfiguration.allCases)
    func beforeHead(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let tag = UUID().uuidString
        try await withClient(backend, middlewares: [TagMiddleware(tag: tag)]) { client, _ in
            let call = Task { try await client.getDelayed(path: .init(milliseconds: 600_000)) }
            #expect(await waitUntil { !server.requests(tagged: tag).isEmpty }, "the request never reached the server")
            call.cancel()
            do {
                _ = try await call.value
                Issue.record("a cancelled call returned")
            } catch {
                #expect(transferError(error)?.code == .cancelled, "\(error)")
            }
            #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned })
        }
    }

    @Test("giving up on a response body mid-way cancels the transfer",
          arguments: BackendConfiguration.allCases, GivingUp.allCases)
    func midBody(_ backend: BackendConfiguration, _ givingUp: GivingUp) async throws {
        let server = try testServer()
        let tag = UUID().uuidString
        // Far more than the 1 MiB the transport buffers, so the server is still sending when the reader stops.
        let count: Int64 = 256 << 20
        try await withClient(backend, middlewares: [TagMiddleware(tag: tag)]) { client, _ in
            switch givingUp {
            case .cancelReader:
                let firstChunk = Locked(false)
                let reader = Task { () -> (any Error)? in
                    let body = try await client.getBytes(path: .init(count: count)).ok.body.binary
                    var iterator = body.makeAsyncIterator()
                    _ = try await iterator.next()
                    firstChunk.set(true)
                    // Waits for the cancellation (a sleep that ends early, not a timing assumption).
                    try? await Task.sleep(for: .seconds(600))
                    do {
                        while try await iterator.next() != nil {}
                        return nil
                    } catch {
                        return error
                    }
                }
                #expect(await waitUntil { firstChunk.value }, "no first chunk")
                reader.cancel()
                let error = try await reader.value
                #expect((error as? TransferError)?.code == .cancelled, "\(String(describing: error))")
            case .dropBody:
                try await Self.readFirstChunkAndDrop(client, count: count)
            }
            #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned },
                    "the server still sends: \(server.requests(tagged: tag))")
        }
    }

    /// Reads one chunk of the body, then lets go of the response, the body and its iterator.
    private static func readFirstChunkAndDrop(_ client: Client, count: Int64) async throws {
        let body = try await client.getBytes(path: .init(count: count)).ok.body.binary
        var iterator = body.makeAsyncIterator()
        let chunk = try await iterator.next()
        #expect(chunk?.isEmpty == false)
    }
}
