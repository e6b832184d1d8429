import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// Every way a transfer can fail gets a typed error, once, with the failing URL.
@Suite("Failures")
struct FailureTests {
    @Test("refused connection", arguments: BackendConfiguration.allCases)
    func refused(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().refusedURL
            let error = try await engine.failure(TransferRequest(url: url))
            #expect(error.code == .cannotConnectToHost)
            #expect(error.failingURL == url)
            #expect(error.curlCode != nil)
        }
    }

    /// A name no resolver can answer, whatever the machine's configuration: its first label is 64
    /// bytes long, one more than a DNS label may have (RFC 1035 §2.3.4), so it cannot be put in a
    /// DNS query at all and the resolver fails without asking any server (checked with `strace`: no
    /// packet leaves; `curlew-no-such-host.invalid` did send one). It is in the `.invalid` TLD too
    /// (RFC 6761), so even a lookup that did not use DNS must not find it. (curl's `CURLOPT_RESOLVE`
    /// could pin a name, but only to an address, not to a failure, and Curlew does not expose it.)
    @Test("unknown host", arguments: BackendConfiguration.allCases)
    func unknownHost(_ backend: BackendConfiguration) async throws {
        let host = String(repeating: "a", count: 64) + ".invalid"
        try await withEngine(backend) { engine in
            let error = try await engine.failure(try TransferRequest(method: "GET", url: "http://\(host)/"))
            #expect(error.code == .cannotFindHost)
            #expect(await engine.diagnostics().foreignSocketWatches == 0, "the resolver's socket watch outlived it")
        }
    }

    @Test("connect timeout", arguments: BackendConfiguration.allCases)
    func connectTimeout(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            var request = TransferRequest(url: try testServer().blackholeURL)
            request.options.connectTimeout = .milliseconds(300)
            let error = try await engine.failure(request)
            #expect(error.code == .timedOut)
        }
    }

    @Test("total timeout", arguments: BackendConfiguration.allCases)
    func totalTimeout(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            var request = try TransferRequest.get(.delay(30_000))
            request.options.timeout = .milliseconds(300)
            #expect(try await engine.failure(request).code == .timedOut)
        }
    }

    @Test("idle timeout", arguments: BackendConfiguration.allCases)
    func idleTimeout(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            var request = try TransferRequest.get(.drip(bytes: 10, chunks: 2, intervalMilliseconds: 30_000))
            request.options.idleTimeout = .seconds(1)
            #expect(try await engine.failure(request).code == .timedOut)
        }
    }

    @Test("server closes mid-body", arguments: BackendConfiguration.allCases)
    func closeMidBody(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let error = try await engine.failure(try .get(.closeMidBody(bytes: 100_000)))
            #expect(error.code == .networkConnectionLost)
        }
    }

    @Test("server resets the connection", arguments: BackendConfiguration.allCases)
    func reset(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let error = try await engine.failure(try .get(.reset))
            #expect(error.code == .networkConnectionLost || error.code == .badServerResponse, "\(error)")
        }
    }

    @Test("TLS verification is on by default", arguments: BackendConfiguration.allCases)
    func tlsVerification(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let url = try testServer().url(.bytes(10), tls: true)
            let error = try await engine.failure(TransferRequest(url: url))
            #expect(error.code == .serverCertificateUntrusted || error.code == .secureConnectionFailed, "\(error)")
            var trusting = TransferRequest(url: url)
            trusting.options.tls.trustedRootsFile = TestServer.caCertificatePath
            #expect(try await engine.fetch(trusting).body?.count == 10)
        }
    }

    @Test("a body over the limit, announced or not", arguments: BackendConfiguration.allCases)
    func oversizedBody(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            for route in [Route.bytes(100_000), .chunked(bytes: 100_000, chunkSize: 4096)] {
                var request = try TransferRequest.get(route)
                request.options.maximumResponseBodySize = 50_000
                let error = try await engine.failure(request)
                #expect(error.code == .responseTooLarge, "\(route): \(error)")
            }
            var exact = try TransferRequest.get(.bytes(50_000))
            exact.options.maximumResponseBodySize = 50_000
            #expect(try await engine.fetch(exact).body?.count == 50_000)
        }
    }

    @Test("a head over the limit", arguments: BackendConfiguration.allCases)
    func oversizedHead(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let error = try await engine.failure(try .get(.hugeHeaders(kilobytes: 200)))
            #expect(error.code == .responseHeadTooLarge, "\(error)")
            var generous = try TransferRequest.get(.hugeHeaders(kilobytes: 20))
            generous.options.maximumResponseHeadSize = 64 * 1024
            #expect(try await engine.fetch(generous).head.status == .ok)
        }
    }

    @Test("invalid requests fail through the delegate, once", arguments: BackendConfiguration.allCases)
    func invalidRequests(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend) { engine in
            let heads = [
                HTTPRequest(method: .get, scheme: "file", authority: "", path: "/etc/passwd"),
                HTTPRequest(method: .get, scheme: "gopher", authority: "127.0.0.1", path: "/"),
                HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: "/a\r\nX-Injected: 1"),
                HTTPRequest(method: .get, scheme: "http", authority: nil, path: "/"),
            ]
            for head in heads {
                let error = try await engine.failure(TransferRequest(head))
                #expect(error.code == .unsupportedURL || error.code == .badURL, "\(head): \(error)")
            }
        }
    }
}

/// An OS `errno` that curl recorded for one failure must not describe the next (curl before 8.8
/// keeps it on a reused easy handle, and a refused connect once turned every later failure on the
/// engine into "cannot connect").
@Suite("Failures: one engine, one fault after another")
struct FailureSequenceTests {
    @Test("after a refused connect, each later fault keeps its own code", arguments: BackendConfiguration.allCases)
    func errnoBelongsToItsFailure(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            let refused = try await engine.failure(TransferRequest(url: server.refusedURL))
            #expect(refused.code == .cannotConnectToHost)
            #expect(refused.osErrno == ECONNREFUSED)

            var slow = try TransferRequest.get(.delay(30_000))
            slow.options.timeout = .milliseconds(300)
            let faults: [(TransferRequest, Set<TransferError.Code>)] = [
                (TransferRequest(url: server.url(.bytes(10), tls: true)), [.serverCertificateUntrusted]),
                (TransferRequest(url: server.faultURL(.emptyReply)), [.badServerResponse]),
                (slow, [.timedOut]),
                (TransferRequest(url: server.refusedURL), [.cannotConnectToHost]),
                (TransferRequest(url: server.faultURL(.badStatusLine)), [.badServerResponse]),
            ]
            for (request, expected) in faults {
                let error = try await engine.failure(request)
                #expect(expected.contains(error.code), "\(request.url?.absoluteString ?? "?"): \(error)")
                if error.code != .cannotConnectToHost {
                    #expect(error.osErrno != ECONNREFUSED, "a stale errno: \(error)")
                }
            }
            // Handles that saw no OS error are reused as before.
            _ = try await engine.fetch(try .get(.bytes(10)))
            _ = try await engine.fetch(try .get(.bytes(10)))
            #expect(await engine.diagnostics().idleEasyHandles >= 1)
        }
    }
}
