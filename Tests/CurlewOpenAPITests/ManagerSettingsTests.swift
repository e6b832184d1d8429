import Curlew
import CurlewOpenAPI
import CurlewTestServer
import CurlewTestSupport
import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import MetricsTestKit
import OpenAPIRuntime
import Testing

/// The manager's settings reach the generated client's calls: credentials, the request serializer's
/// header fields, the retry policy and the interceptor, the security policy, the logger and the
/// metrics; and a retry sends a collected request body again, never a streamed one.
@Suite("OpenAPI transport: the manager's settings")
struct ManagerSettingsTests {
    @Test("the manager's credentials answer the server's challenge", arguments: BackendConfiguration.allCases)
    func credentials(_ backend: BackendConfiguration) async throws {
        try await withClient(backend) { client, manager in
            let path = Operations.GetBasicAuth.Input.Path(user: "ada", password: "lovelace")
            _ = try await client.getBasicAuth(path: path).unauthorized

            manager.credentials = TransferCredentials(user: "ada", password: "lovelace")
            let answer = try await client.getBasicAuth(path: path).ok.body.json
            #expect(answer.authenticated)
            #expect(answer.user == "ada")
        }
    }

    @Test("the request serializer's default header fields are sent; the operation's own win",
          arguments: BackendConfiguration.allCases)
    func serializerHeaders(_ backend: BackendConfiguration) async throws {
        try await withClient(backend) { client, manager in
            var serializer = HTTPRequestSerializer()
            try serializer.setBearerToken("s3cret")
            try serializer.setValue("from-the-manager", forHeader: "X-Note")
            manager.requestSerializer = serializer
            let echo = try await client.echoNote(path: .init(label: "x"), headers: .init(xNote: "from-the-call"),
                                                 body: .json(.init(title: "t"))).ok.body.json
            #expect(header(echo, "authorization") == ["Bearer s3cret"])
            #expect(header(echo, "x-note") == ["from-the-call"])
        }
    }

    @Test("the retry policy retries a call until it succeeds", arguments: BackendConfiguration.allCases)
    func retries(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withClient(backend) { client, manager in
            let once = "openapi-once-\(UUID().uuidString)"
            guard case .serviceUnavailable = try await client.getFlaky(path: .init(key: once), query: .init(failures: 1)) else {
                Issue.record("without retries the 503 is the answer")
                return
            }
            manager.retryPolicy = RetryPolicy(maximumAttempts: 3, initialBackoff: .milliseconds(1))
            let key = "openapi-retry-\(UUID().uuidString)"
            let echo = try await client.getFlaky(path: .init(key: key), query: .init(failures: 2)).ok.body.json
            #expect(echo.method == "GET")
            #expect(server.requests(forKey: key) == 3)
        }
    }

    @Test("a retry after an attempt that read the body sends a collected body again, never a streamed one",
          arguments: BackendConfiguration.allCases)
    func retryingBodies(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withClient(backend) { client, manager in
            manager.interceptor = RetryOnce()

            let small = "openapi-small-\(UUID().uuidString)"
            let echo = try await client.putFlaky(path: .init(key: small), query: .init(failures: 0),
                                                 body: .binary(producerBody(count: 1000, announced: true))).ok.body.json
            #expect(echo.bodyLength == 1000)
            #expect(echo.bodyChecksum == patternChecksum(count: 1000))
            #expect(server.requests(forKey: small) == 2, "the collected body was not sent twice")

            // The manager does not send a streamed body again: it keeps the attempt's outcome or fails typed.
            let streamed = "openapi-streamed-\(UUID().uuidString)"
            do {
                let output = try await client.putFlaky(path: .init(key: streamed), query: .init(failures: 0),
                                                       body: .binary(producerBody(count: 1000)))
                #expect(try output.ok.body.json.bodyLength == 1000)
            } catch {
                #expect(transferError(error)?.code == .requestBodyStreamExhausted, "\(error)")
            }
            #expect(server.requests(forKey: streamed) == 1, "a streamed body was sent twice")
        }
    }
}

extension ManagerSettingsTests {
    @Test("over TLS (the manager's security policy) bodies stream both ways as HTTP/2; the manager logs and counts each call",
          arguments: BackendConfiguration.allCases)
    func tlsLoggingAndMetrics(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let metrics = TestMetrics()
        let logs = InMemoryLogHandler()
        let count = 3 << 20 + 5
        try await withEngine(on: backend.makeScheduler()) { engine in
            let manager = RequestOperationManager(engine: engine, metricsFactory: metrics)
            manager.securityPolicy.trustedRootsFile = TestServer.caCertificatePath
            var logger = Logger(label: "curlew.openapi.tests", factory: { _ in logs })
            logger.logLevel = .debug
            manager.logger = logger
            let client = Client(serverURL: server.tlsBaseURL, transport: CurlewClientTransport(manager: manager))

            var check = PatternCheck()
            for try await chunk in try await client.getBytes(path: .init(count: Int64(count))).ok.body.binary {
                check.check(chunk)
            }
            #expect(check.count == Int64(count))
            #expect(check.matches)
            let echo = try await client.uploadBytes(body: .binary(producerBody(count: count))).ok.body.json
            #expect(echo.bodyLength == Int64(count))
            #expect(echo.bodyChecksum == patternChecksum(count: count))
            await manager.shutdown()
        }
        let finished = logs.entries.filter { "\($0.message)".contains(" 200 in ") }
        let download = server.tlsBaseURL.absoluteString + "/bytes/\(count)"
        let upload = server.tlsBaseURL.absoluteString + "/echo"
        #expect(finished.map { "\($0.message)".components(separatedBy: " 200 in ")[0] } == ["GET \(download)", "POST \(upload)"],
                "\(logs.entries.map { "\($0.message)" })")
        #expect(finished.allSatisfy { $0.metadata["curlew.http"] == "HTTP/2" }, "\(finished.map(\.metadata))")
        #expect(metrics.counterTotal(label: RequestMetricsLabels.requests, dimensions: [("method", "GET")]) == 1)
        #expect(metrics.counterTotal(label: RequestMetricsLabels.requests, dimensions: [("method", "POST")]) == 1)
        #expect(metrics.counterTotal(label: RequestMetricsLabels.failures) == 0)
    }
}

/// Asks for one more attempt after the first, whatever its outcome.
struct RetryOnce: RequestInterceptor {
    func retry(_ request: TransferRequest, after outcome: Result<TransferResponse, TransferError>, attempt: Int) async
        -> RetryDecision
    {
        attempt == 1 ? .retry(after: .zero) : .doNotRetry
    }
}
