import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// The engine hands a finished transfer's easy handle to the next one and keeps its options when
/// both are set up alike (`HandleSetup`). One request at a time, so every request below runs on
/// the handle the previous one left: whatever a request set must not reach the next.
@Suite("Handle reuse")
struct HandleReuseTests {
    @Test("nothing a request set carries over to the next one on the same handle", arguments: BackendConfiguration.allCases)
    func nothingCarriesOver(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            // A header, then none: the same setup, so the handle keeps its options but not the list.
            var tagged = TransferRequest(url: server.url(.echo))
            tagged.head.headerFields[HTTPField.Name("X-Carried")!] = "yes"
            #expect(try EchoReply(try await engine.fetch(tagged)).headerValues("X-Carried") == ["yes"])
            let untagged = try EchoReply(try await engine.fetch(TransferRequest(url: server.url(.echo))))
            #expect(untagged.headerValues("X-Carried").isEmpty, "a header list outlived its request")

            // A body, a header and a method name, then a plain GET.
            var post = TransferRequest(url: server.url(.echo), method: .put, body: .data(Data(repeating: 7, count: 1000)))
            post.head.headerFields[HTTPField.Name("X-Carried")!] = "yes"
            let first = try EchoReply(try await engine.fetch(post))
            #expect(first.method == "PUT" && first.bodyLength == 1000 && first.headerValues("X-Carried") == ["yes"])
            for _ in 0..<2 {
                let get = try EchoReply(try await engine.fetch(TransferRequest(url: server.url(.echo))))
                #expect(get.method == "GET")
                #expect(get.bodyLength == 0)
                #expect(get.headerValues("X-Carried").isEmpty, "a header list outlived its request")
                #expect(get.headerValues("Content-Type").isEmpty)
            }

            // HEAD asks curl for no body; the GET after it must get one.
            let head = try await engine.fetch(TransferRequest(url: server.url(.bytes(1000)), method: .head))
            #expect(head.body?.isEmpty == true)
            let body = try await engine.fetch(TransferRequest(url: server.url(.bytes(1000))))
            #expect(body.body?.count == 1000, "the previous HEAD's no-body option carried over")

            // A total timeout is the transfer's own: a later request without one waits as long as it takes.
            var bounded = TransferRequest(url: server.url(.echo))
            bounded.options.timeout = .milliseconds(1500)
            _ = try await engine.fetch(bounded)
            let slow = try await engine.fetch(TransferRequest(url: server.url(.delay(3000))))
            #expect(slow.head.status == .ok, "the previous request's timeout carried over")

            // Decompression off, then on, then off again: the Accept-Encoding curl adds follows each request.
            var plain = TransferRequest(url: server.url(.echo))
            plain.options.automaticDecompression = false
            let off = try EchoReply(try await engine.fetch(plain))
            let on = try EchoReply(try await engine.fetch(TransferRequest(url: server.url(.echo))))
            let offAgain = try EchoReply(try await engine.fetch(plain))
            #expect(off.headerValues("Accept-Encoding").isEmpty)
            #expect(!on.headerValues("Accept-Encoding").isEmpty)
            #expect(offAgain.headerValues("Accept-Encoding").isEmpty)
        }
    }

    @Test("URL credentials and body limits are the request's own, not the handle's", arguments: BackendConfiguration.allCases)
    func resilienceSettingsDoNotCarryOver(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            // Credentials in the URL become the request's Authorization; the next request has none.
            var components = try #require(URLComponents(url: server.url(.echo), resolvingAgainstBaseURL: false))
            components.user = "ada"
            components.password = "secret"
            let withCredentials = try EchoReply(try await engine.fetch(TransferRequest(url: try #require(components.url))))
            #expect(withCredentials.headerValues("Authorization") == ["Basic " + Data("ada:secret".utf8).base64EncodedString()])
            let without = try EchoReply(try await engine.fetch(TransferRequest(url: server.url(.echo))))
            #expect(without.headerValues("Authorization").isEmpty, "credentials outlived their request")

            // A cap that fails the body, then the defaults: the whole body arrives.
            for limit in [\TransferOptions.maximumInMemoryBodySize, \TransferOptions.maximumResponseBodySize] {
                var capped = TransferRequest(url: server.url(.bytes(100_000)))
                capped.options[keyPath: limit] = 1000
                let error = try await #require(throws: TransferError.self) { try await engine.fetch(capped) }
                #expect(error.code == .responseTooLarge)
                let uncapped = try await engine.fetch(TransferRequest(url: server.url(.bytes(100_000))))
                #expect(uncapped.body?.count == 100_000, "a body limit outlived its request")
            }
        }
    }
}
