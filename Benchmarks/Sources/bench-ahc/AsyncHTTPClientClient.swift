import AsyncHTTPClient
import BenchKit
import NIOCore
import NIOPosix
import NIOSSL

/// `async-http-client`: AsyncHTTPClient with its async/await API, as in the perf-anchors addendum.
///
/// - **One event-loop thread**: its own `MultiThreadedEventLoopGroup(numberOfThreads: 1)` (not
///   `.singleton`, which has one thread per core: on 2 cores that is 2, and 2 did not help).
/// - The connection pool's HTTP/1.1 per-host limit is C; HTTP/2 (negotiated through ALPN for `h2`,
///   trusting `--ca-file`) multiplexes on one connection.
/// - Each of the C in-flight slots is a `Task` on the global concurrent executor that loops:
///   `execute`, `body.collect`, report, take the next ticket — what an async/await user writes.
/// - `stream`: the body is iterated as it arrives (`for try await buffer in response.body`), each
///   buffer counted and dropped, never collected.
final class AsyncHTTPClientClient: LoadClient {
    private static let requestTimeout = TimeAmount.seconds(3600)

    private let group: MultiThreadedEventLoopGroup
    private let client: HTTPClient
    private let request: HTTPClientRequest
    private let protocolCheck: ProtocolCheck
    private let streams: Bool
    var note: String? {
        self.protocolCheck.note(
            adding: "1 event-loop thread (own MultiThreadedEventLoopGroup), async/await execute on the global executor"
                + (self.streams ? "; the body iterated as it arrives, never collected" : ""))
    }

    init(options: BenchOptions) throws(ClientSetupError) {
        var request = HTTPClientRequest(url: options.url)
        switch options.scenario {
        case .post:
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.body = .bytes(ByteBuffer(repeating: UInt8(ascii: "x"), count: options.bodyBytes))
        case .get, .stream, .h2, .idle, .lateness:
            request.method = .GET
        case .batch:
            throw .batchNotSupported
        }
        self.request = request
        self.protocolCheck = ProtocolCheck(options)
        self.streams = options.scenario == .stream

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.connections)
        configuration.httpVersion = .automatic
        if let caFile = options.caFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(caFile)
            configuration.tlsConfiguration = tls
        }
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.client = HTTPClient(eventLoopGroup: self.group, configuration: configuration)
    }

    func start(_ ticket: RequestTicket) {
        Task { await self.run(from: ticket) }
    }

    /// One in-flight slot: a request at a time, the next one as soon as this one is reported.
    private func run(from first: RequestTicket) async {
        var ticket = first
        while true {
            let outcome = await self.perform()
            guard let next = ticket.finish(outcome) else { return }
            ticket = next
        }
    }

    private func perform() async -> RequestOutcome {
        do {
            let response = try await self.client.execute(self.request, timeout: Self.requestTimeout)
            var bytes = 0
            if self.streams {
                for try await buffer in response.body { bytes += buffer.readableBytes }
            } else {
                bytes = try await response.body.collect(upTo: Int.max).readableBytes
            }
            self.protocolCheck.record(isHTTP2: response.version == .http2)
            return .response(status: Int(response.status.code), bytes: bytes)
        } catch {
            return .failure(String(describing: error))
        }
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        let client = self.client
        let group = self.group
        Task {
            do {
                try await client.shutdown()
                try await group.shutdownGracefully()
            } catch {
                StandardError.write("async-http-client shutdown: \(error)")
            }
            completion()
        }
    }
}
