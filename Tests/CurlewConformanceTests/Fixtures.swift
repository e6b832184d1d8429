import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// The one in-process server every conformance test talks to (127.0.0.1 only).
enum Fixtures {
    static let server: Result<TestServer, any Error> = Result {
        try TestServer.start(TestServer.Configuration(eventLoopThreads: 2))
    }

    /// Options that trust the test CA, for the TLS listener.
    static var trustingTestCA: TransferOptions {
        var options = TransferOptions()
        options.tls.trustedRootsFile = TestServer.caCertificatePath
        return options
    }
}

/// The shared test server.
func testServer() throws -> TestServer {
    try Fixtures.server.get()
}

/// Runs `body` with a new engine on `backend`, then shuts it down and checks that it left nothing
/// behind: no live transfer, no socket, no watch, no pending close, no armed timer.
func withEngine(
    _ backend: BackendConfiguration,
    configure: (inout TransferEngine.Configuration) -> Void = { _ in },
    _ body: (TransferEngine) async throws -> Void
) async throws {
    var configuration = TransferEngine.Configuration()
    configure(&configuration)
    let engine = TransferEngine(scheduler: backend.makeScheduler(), configuration: configuration)
    do {
        try await body(engine)
    } catch {
        await engine.shutdown()
        throw error
    }
    await engine.shutdown()
    let after = await engine.diagnostics()
    #expect(after.liveTransfers == 0, "transfers left after shutdown: \(after)")
    #expect(after.openSockets == 0, "sockets left after shutdown: \(after)")
    #expect(after.scheduler == SchedulerDiagnostics(), "scheduler holdings after shutdown: \(after.scheduler)")
}

/// A delegate that records everything a transfer reports, checks each call happens on the engine's
/// context, and lets a test wait for the completion.
final class TransferRecorder: TransferDelegate, Sendable {
    struct Events: Sendable {
        var heads: [HTTPResponse] = []
        var progress: [TransferProgress] = []
        var redirects: [HTTPRequest] = []
        var pauses = 0
        var completions: [Result<TransferResponse, TransferError>] = []
        var callsOffContext = 0
    }

    let events = Locked(Events())
    private let scheduler: any TransferScheduler
    private let onProgress: (@Sendable (Transfer, TransferProgress) -> Void)?
    private let onRedirect: (@Sendable (HTTPRequest) -> HTTPRequest?)?

    init(
        _ engine: TransferEngine,
        onProgress: (@Sendable (Transfer, TransferProgress) -> Void)? = nil,
        onRedirect: (@Sendable (HTTPRequest) -> HTTPRequest?)? = nil
    ) {
        self.scheduler = engine.scheduler
        self.onProgress = onProgress
        self.onRedirect = onRedirect
    }

    private func record(_ change: (inout Events) -> Void) {
        let onContext = self.scheduler.isOnContext
        self.events.withLock { events in
            if !onContext { events.callsOffContext += 1 }
            change(&events)
        }
    }

    func transfer(_ transfer: Transfer, didReceive response: HTTPResponse) {
        self.record { $0.heads.append(response) }
    }

    func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) {
        self.record { $0.progress.append(progress) }
        self.onProgress?(transfer, progress)
    }

    func transfer(_ transfer: Transfer, willRedirect response: HTTPResponse, to request: HTTPRequest) -> HTTPRequest? {
        self.record { $0.redirects.append(request) }
        return self.onRedirect.map { $0(request) } ?? request
    }

    func transferDidPause(_ transfer: Transfer) {
        self.record { $0.pauses += 1 }
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.record { $0.completions.append(result) }
    }

    var completionCount: Int { self.events.value.completions.count }

    /// Waits for the completion (generously) and returns it; `nil` if it never came.
    func result(timeout: Duration = .seconds(60)) async -> Result<TransferResponse, TransferError>? {
        guard await waitUntil(timeout: timeout, { self.completionCount > 0 }) else { return nil }
        return self.events.value.completions.first
    }
}

extension TransferEngine {
    /// Starts `request` with a recorder and waits for its one completion.
    func run(_ request: TransferRequest, recorder: TransferRecorder? = nil) async throws -> (Result<TransferResponse, TransferError>, TransferRecorder) {
        let recorder = recorder ?? TransferRecorder(self)
        self.makeTransfer(request, delegate: recorder).start()
        let result = try #require(await recorder.result(), "the transfer never completed")
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

extension TransferRequest {
    /// A GET of a test server route.
    static func get(_ route: Route, tls: Bool = false) throws -> TransferRequest {
        let server = try testServer()
        return TransferRequest(url: server.url(route, tls: tls), options: tls ? Fixtures.trustingTestCA : TransferOptions())
    }
}

extension EchoReply {
    /// Decodes the `/echo` reply in a response body.
    init(_ response: TransferResponse) throws {
        self = try JSONDecoder().decode(EchoReply.self, from: try #require(response.body))
    }
}

extension TransferEngine {
    /// Waits until the engine has `count` connection sockets open; records what it saw if not.
    func waitForOpenSockets(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
        let last = Locked<EngineDiagnostics?>(nil)
        let reached = await waitUntil {
            let diagnostics = await self.diagnostics()
            last.set(diagnostics)
            return diagnostics.openSockets == count
        }
        #expect(reached, "expected \(count) open sockets, last saw \(String(describing: last.value))",
                sourceLocation: sourceLocation)
    }
}
