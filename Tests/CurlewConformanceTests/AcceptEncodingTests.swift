internal import CCurl
import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// The engine writes the `Accept-Encoding` line itself instead of letting curl format it for every
/// request; what reaches the server must be what libcurl sends on its own.
@Suite("Accept-Encoding as libcurl sends it")
struct AcceptEncodingTests {
    @Test("with decompression on, the server sees libcurl's own Accept-Encoding, once, whatever else the request carries",
          arguments: BackendConfiguration.allCases)
    func sameAsLibcurl(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let libcurls = try await Self.acceptEncodingOfPlainLibcurl(server.url(.echo))
        #expect(!libcurls.isEmpty)
        try await withEngine(backend) { engine in
            let bare = try EchoReply(try await engine.fetch(TransferRequest(url: server.url(.echo))))
            #expect(bare.headerValues("Accept-Encoding") == [libcurls])

            let custom = try #require(HTTPField.Name("X-Curlew"))
            var withField = TransferRequest(url: server.url(.echo))
            withField.head.headerFields[custom] = "1"
            let fielded = try EchoReply(try await engine.fetch(withField))
            #expect(fielded.headerValues("Accept-Encoding") == [libcurls])
            #expect(fielded.headerValues("X-Curlew") == ["1"])

            var posted = TransferRequest(url: server.url(.echo), method: .post)
            posted.body = .data(Data("body".utf8))
            let post = try EchoReply(try await engine.fetch(posted))
            #expect(post.headerValues("Accept-Encoding") == [libcurls])
            #expect(post.bodyLength == 4)

            // Set by the caller: the caller's value alone (curl is not asked to decode).
            var own = TransferRequest(url: server.url(.echo))
            own.head.headerFields[.acceptEncoding] = "identity"
            #expect(try EchoReply(try await engine.fetch(own)).headerValues("Accept-Encoding") == ["identity"])
        }
    }

    /// The `Accept-Encoding` a bare libcurl easy handle with `CURLOPT_ACCEPT_ENCODING ""` sends to
    /// `url` (an echo route), or "" when it sent none.
    private static func acceptEncodingOfPlainLibcurl(_ url: URL) async throws -> String {
        let body = try await Task.detached { () -> Data in
            let collected = Collected()
            guard let easy = curl_easy_init() else { throw PlainLibcurlFailed(code: nil) }
            defer { curl_easy_cleanup(easy) }
            _ = ccurl_easy_setopt_string(easy, CURLOPT_URL, url.absoluteString)
            _ = ccurl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")
            _ = ccurl_easy_setopt_string(easy, CURLOPT_PROXY, "")
            _ = ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, 30_000)
            _ = ccurl_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION) { buffer, size, count, userdata in
                guard let userdata else { return 0 }
                Unmanaged<Collected>.fromOpaque(userdata).takeUnretainedValue().data.append(
                    UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: size * count)
                return size * count
            }
            _ = ccurl_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(collected).toOpaque())
            let code = curl_easy_perform(easy)
            guard code == CURLE_OK else { throw PlainLibcurlFailed(code: Int(code.rawValue)) }
            return collected.data
        }.value
        let reply = try JSONDecoder().decode(EchoReply.self, from: body)
        return reply.headerValues("Accept-Encoding").first ?? ""
    }

    /// The bare libcurl request failed (`code` is its `CURLcode`), or no handle could be made.
    private struct PlainLibcurlFailed: Error {
        let code: Int?
    }

    /// What the write callback collects; used on the one thread that runs `curl_easy_perform`.
    private final class Collected {
        var data = Data()
    }
}
