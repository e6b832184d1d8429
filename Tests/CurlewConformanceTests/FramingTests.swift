import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// Response framing held to RFC 9112 §6.3 against raw hostile heads from the fault listener: a body
/// length that is not one non-negative 64-bit decimal, or one beside `Transfer-Encoding`, fails with
/// `badServerResponse` naming the field — where curl 7.88 alone would take the last of two lengths,
/// the digits before junk, or read to the close — and the same value repeated is accepted.
@Suite("Response framing")
struct FramingTests {
    /// The heads whose framing is invalid, and a word the error must name.
    static let invalid: [(FaultRoute, String)] = [
        (.conflictingLengths, "Content-Length"),
        (.conflictingLengthList, "Content-Length"),
        (.overflowingLength, "Content-Length"),
        (.negativeLength, "Content-Length"),
        (.junkLength, "Content-Length"),
        (.emptyLength, "Content-Length"),
        (.chunkedWithLength, "Transfer-Encoding"),
    ]

    @Test("invalid framing fails with badServerResponse naming the field", arguments: BackendConfiguration.allCases)
    func invalidFraming(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            for (route, field) in Self.invalid {
                let error = try await engine.failure(TransferRequest(url: server.faultURL(route)))
                #expect(error.code == .badServerResponse, "\(route): \(error)")
                #expect(error.message.contains(field), "\(route): \(error)")
                #expect(error.failingURL == server.faultURL(route))
                #expect(RetryPolicy.default.decide(after: .failure(error), method: .get, attempt: 1) == .doNotRetry,
                        "\(route): a response that came is not retried")
            }
            // The engine goes on: the next transfer succeeds.
            #expect(try await engine.fetch(TransferRequest.get(.bytes(10))).body?.count == 10)
        }
    }

    @Test("the same length repeated, in two fields or a list, is that length", arguments: BackendConfiguration.allCases)
    func repeatedLength(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            for route in [FaultRoute.repeatedLengths, .repeatedLengthList] {
                let (result, recorder) = try await engine.run(TransferRequest(url: server.faultURL(route)))
                let response = try result.get()
                #expect(response.body == Data("abcdefgh".utf8), "\(route)")
                #expect(recorder.events.value.progress.last?.expectedBytesToReceive == 8, "\(route)")
            }
        }
    }
}
