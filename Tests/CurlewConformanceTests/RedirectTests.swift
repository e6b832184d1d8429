import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

@Suite("Redirects")
struct RedirectTests {
    @Test("a chain of redirects is followed", arguments: BackendConfiguration.allCases)
    func followsChain(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            for status in [301, 302, 303, 307, 308] {
                let (result, recorder) = try await engine.run(try .get(.redirect(count: 3, status: status)))
                let response = try result.get()
                #expect(response.head.status == .ok)
                #expect(response.body == Data("redirected".utf8))
                #expect(response.metrics.redirectCount == 3)
                #expect(response.url.path == "/redirect/0")
                #expect(recorder.events.value.redirects.count == 3)
                #expect(recorder.events.value.heads.count == 1, "redirect heads must not be delivered")
            }
        }
    }

    @Test("the maximum is enforced, loops end", arguments: BackendConfiguration.allCases)
    func maximum(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            var request = try TransferRequest.get(.redirect(count: 5))
            request.options.redirects = .follow(maximum: 4)
            let error = try await engine.failure(request)
            #expect(error.code == .tooManyRedirects)
            #expect(error.failingURL?.path == "/redirect/1")
            request.options.redirects = .follow(maximum: 5)
            #expect(try await engine.fetch(request).metrics.redirectCount == 5)
            #expect(try await engine.failure(try .get(.redirectLoop)).code == .tooManyRedirects)
        }
    }

    @Test("not following delivers the redirect itself", arguments: BackendConfiguration.allCases)
    func notFollowing(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            var request = try TransferRequest.get(.redirect(count: 2))
            request.options.redirects = .none
            let response = try await engine.fetch(request)
            #expect(response.head.status.code == 302)
            #expect(response.head.headerFields[.location] == "/redirect/1")
        }
    }

    /// The delegate is asked about the first redirect, says no, and gets the 302 itself: the server
    /// saw one request only.
    @Test("a delegate can stop a redirect", arguments: BackendConfiguration.allCases)
    func delegateStops(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let tag = UUID().uuidString
            let recorder = TransferRecorder(engine, onRedirect: { _ in nil })
            let (result, _) = try await engine.run(try TransferRequest.get(.redirect(count: 2)).tagged(tag), recorder: recorder)
            let response = try result.get()
            #expect(response.head.status.code == 302)
            #expect(response.head.headerFields[.location] == "/redirect/1")
            #expect(recorder.events.value.redirects.map(\.path) == ["/redirect/1"], "the delegate was asked once, about /redirect/1")
            #expect(try testServer().requests(tagged: tag).map(\.target) == ["/redirect/2"])
        }
    }

    @Test("redirect to file:// and other schemes is refused", arguments: BackendConfiguration.allCases)
    func refusesNonHTTP(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            for target in ["file:///etc/passwd", "ftp://127.0.0.1/x", "dict://127.0.0.1:1/x"] {
                let error = try await engine.failure(try .get(.redirectTo(url: target)))
                #expect(error.code == .unsupportedURL, "\(target): \(error)")
                #expect(error.failingURL?.absoluteString == target)
            }
        }
    }

    @Test("POST becomes GET on 303, stays POST with its body on 307", arguments: BackendConfiguration.allCases)
    func methodRewriting(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let server = try testServer()
            let body = Data("payload".utf8)
            let to303 = TransferRequest(url: server.url(.redirectTo(url: "/echo", status: 303)), method: .post, body: .data(body))
            let echo303 = try EchoReply(try await engine.fetch(to303))
            #expect(echo303.method == "GET")
            #expect(echo303.bodyLength == 0)
            let to307 = TransferRequest(url: server.url(.redirectTo(url: "/echo", status: 307)), method: .post, body: .data(body))
            let echo307 = try EchoReply(try await engine.fetch(to307))
            #expect(echo307.method == "POST")
            #expect(echo307.bodyLength == body.count)
        }
    }

    @Test("credentials do not cross origins", arguments: BackendConfiguration.allCases)
    func credentials(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let server = try testServer()
            var sameOrigin = TransferRequest(url: server.url(.redirectTo(url: "/echo")))
            sameOrigin.head.headerFields[.authorization] = "Bearer secret"
            #expect(try EchoReply(try await engine.fetch(sameOrigin)).headerValues("Authorization") == ["Bearer secret"])
            // The TLS listener is another origin (scheme and port differ).
            var crossOrigin = TransferRequest(url: server.url(.redirectTo(url: server.url(.echo, tls: true).absoluteString)),
                                              options: TransferOptions.trustingTestCA)
            crossOrigin.head.headerFields[.authorization] = "Bearer secret"
            #expect(try EchoReply(try await engine.fetch(crossOrigin)).headerValues("Authorization").isEmpty)
        }
    }

    @Test("a header marked secret and the cookie jar do not cross origins either", arguments: BackendConfiguration.allCases)
    func secretHeadersAndCookies(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let server = try testServer()
            let apiKey = try #require(HTTPField.Name("X-API-Key"))
            let jar = CookieJar()
            var setCookie = TransferRequest(url: server.url(.setCookie(name: "session", value: "abc")))
            setCookie.options.cookieJar = jar
            _ = try await engine.fetch(setCookie)
            func request(redirectingTo target: URL) -> TransferRequest {
                var request = TransferRequest(url: server.url(.redirectTo(url: target.absoluteString)), options: .trustingTestCA)
                request.head.headerFields[apiKey] = "k3y"
                request.options.secretHeaderNames = [apiKey]
                request.options.cookieJar = jar
                return request
            }
            let same = try EchoReply(try await engine.fetch(request(redirectingTo: server.url(.echo))))
            #expect(same.headerValues("X-API-Key") == ["k3y"] && same.headerValues("Cookie") == ["session=abc"])
            // The TLS listener: the same host on another scheme and port, where curl alone would send the
            // cookie (it is not Secure, and cookies ignore ports).
            let other = try EchoReply(try await engine.fetch(request(redirectingTo: server.url(.echo, tls: true))))
            #expect(other.headerValues("X-API-Key").isEmpty, "\(other.headers)")
            #expect(other.headerValues("Cookie").isEmpty, "\(other.headers)")
            // Nor does the jar keep what another origin sets.
            _ = try await engine.fetch(request(redirectingTo: server.url(.setCookie(name: "foreign", value: "1"), tls: true)))
            #expect(jar.cookies.map(\.name) == ["session"])
        }
    }
}
