import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// `TransferRequest(URLRequest)` and `HTTPURLResponse(TransferResponse)`, on every backend.
@Suite("Foundation bridges")
struct FoundationBridgeTests {
    @Test("a URLRequest's method, URL, headers, body and timeout cross over; the response comes back as HTTPURLResponse",
          arguments: BackendConfiguration.allCases)
    func roundTrip(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend) { api in
            var urlRequest = URLRequest(url: server.url(path: "/echo/bridge?x=1"))
            urlRequest.httpMethod = "PUT"
            urlRequest.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            urlRequest.setValue("yes", forHTTPHeaderField: "X-Bridged")
            urlRequest.httpBody = Data("from Foundation".utf8)
            urlRequest.timeoutInterval = 5
            let request = try TransferRequest(urlRequest)
            #expect(request.options.connectTimeout == .seconds(5))
            #expect(request.options.idleTimeout == .seconds(5))

            let task = api.task(for: request, as: Echo.self)
            let reply = try await task.response
            let (echo, response) = (reply.value, reply.response)
            #expect(echo.method == "PUT" && echo.path == "/echo/bridge" && echo.query == "x=1")
            #expect(echo.headerValues("X-Bridged") == ["yes"])
            #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(Array("from Foundation".utf8))))

            let foundation = try #require(HTTPURLResponse(response))
            #expect(foundation.statusCode == 200)
            #expect(foundation.url == response.url)
            #expect(foundation.value(forHTTPHeaderField: "Content-Type") == "application/json")
        }
    }

    @Test("what a transfer cannot send is a typed error")
    func refusals() throws {
        #expect(throws: TransferError.self) { try TransferRequest(URLRequest(url: URL(fileURLWithPath: "/etc/passwd"))) }
        var streamed = URLRequest(url: try #require(URL(string: "http://127.0.0.1/")))
        streamed.httpBodyStream = InputStream(data: Data("x".utf8))
        do {
            _ = try TransferRequest(streamed)
            Issue.record("a body stream was accepted")
        } catch {
            #expect(error.code == .invalidRequest)
        }
    }
}
