import Curlew
import CurlewOpenAPI
import CurlewTestServer
import CurlewTestSupport
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` with the generated client over a `CurlewClientTransport` over a manager on a new engine
/// of `backend`, pointed at the shared test server (`serverURL`, its plain HTTP/1.1 URL by default);
/// afterwards shuts the manager down and checks (with the engine harness) that no transfer, socket or
/// scheduler holding is left.
func withClient(
    _ backend: BackendConfiguration,
    serverURL: URL? = nil,
    configuration: CurlewClientTransport.Configuration = CurlewClientTransport.Configuration(),
    middlewares: [any ClientMiddleware] = [],
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (Client, RequestOperationManager) async throws -> Void
) async throws {
    let server = try testServer()
    try await withEngine(on: backend.makeScheduler(), sourceLocation: sourceLocation) { engine in
        let manager = RequestOperationManager(engine: engine)
        let transport = CurlewClientTransport(manager: manager, configuration: configuration)
        let client = Client(serverURL: serverURL ?? server.baseURL, transport: transport, middlewares: middlewares)
        do {
            try await body(client, manager)
        } catch {
            await manager.shutdown()
            throw error
        }
        await manager.shutdown()
    }
}

/// Adds the test server's tag header to every request, so that ``TestServer/requests(tagged:)`` tells
/// what the server saw of the test's own requests.
struct TagMiddleware: ClientMiddleware {
    let tag: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let name = HTTPField.Name(TestServer.tagHeaderName) { request.headerFields[name] = tag }
        return try await next(request, body, baseURL)
    }
}

/// Checks a body against the server's pattern (byte `i` is `i % 251`, ``TestServer/expectedBody(count:offset:)``)
/// chunk by chunk, keeping nothing but a count: `memcmp` against one pre-built stretch of the pattern.
struct PatternCheck {
    private static let stretch = 64 << 10
    private static let pattern = TestServer.expectedBody(count: stretch + 251)

    /// Bytes checked so far.
    private(set) var count: Int64 = 0
    /// Whether every byte so far matched.
    private(set) var matches = true

    mutating func check(_ chunk: ArraySlice<UInt8>) {
        chunk.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let length = min(Self.stretch, bytes.count - offset)
                let phase = Int((self.count + Int64(offset)) % 251)
                let equal = Self.pattern.withUnsafeBytes { pattern in
                    pattern.baseAddress.map { memcmp(base + offset, $0 + phase, length) == 0 } ?? false
                }
                if !equal { self.matches = false }
                offset += length
            }
        }
        self.count += Int64(chunk.count)
    }
}

/// A request body produced while it is sent: `count` bytes of the server's pattern in chunks of
/// `chunkSize`, from an `AsyncStream` (`.single` iteration, length unknown unless `announced`).
func producerBody(count: Int, chunkSize: Int = 64 << 10, announced: Bool = false) -> HTTPBody {
    let pattern = TestServer.expectedBody(count: count)
    let position = Locked(0)
    let stream = AsyncStream<ArraySlice<UInt8>>(unfolding: {
        position.withLock { start -> ArraySlice<UInt8>? in
            guard start < count else { return nil }
            let end = min(count, start + chunkSize)
            defer { start = end }
            return pattern[start..<end]
        }
    })
    return HTTPBody(stream, length: announced ? .known(Int64(count)) : .unknown)
}

/// The FNV-1a checksum the echo reports for the first `count` bytes of the server's pattern.
func patternChecksum(count: Int) -> String {
    FNV1a64.hex(TestServer.checksum(TestServer.expectedBody(count: count)))
}

/// The `TransferError` a generated client's call threw, wrapped in `ClientError` by the runtime.
func transferError(_ error: any Error) -> TransferError? {
    ((error as? ClientError)?.underlyingError ?? error) as? TransferError
}
