import Dispatch
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOConcurrencyHelpers

/// An in-process HTTP server for Curlew's tests, examples and benchmarks, bound to 127.0.0.1 only.
///
/// One server runs three listeners on free ports, all serving the same typed ``Route``s:
/// plain HTTP/1.1 (``port``), TLS with ALPN `h2` and `http/1.1` (``tlsPort``, certificates signed by
/// ``caCertificatePath``) and cleartext HTTP/2 with prior knowledge (``h2cPort``). It also provides
/// TLS listeners that require a client certificate (``mutualTLSBaseURL``) or speak HTTP/1.1 only
/// (``http1TLSBaseURL``), ``refusedURL`` (connects are refused), ``blackholeURL`` (connects hang) and a raw TCP listener
/// that answers with malformed replies (``faultURL(_:)``, see ``FaultRoute``). Requests carrying the
/// ``tagHeaderName`` header are recorded (``requests(tagged:)``), so a test can ask what the server saw
/// of its own requests while others share the server.
///
/// ```swift
/// let server = try TestServer.start()
/// defer { server.shutdown() }
/// let url = server.url(.bytes(100))             // http://127.0.0.1:PORT/bytes/100
/// let secure = server.url(.json, tls: true)     // https://127.0.0.1:TLSPORT/json
/// ```
///
/// Call ``shutdown()`` (or ``shutdownGracefully()``) when done; never from one of the server's own
/// event-loop threads.
public final class TestServer: Sendable {
    /// The configuration the server was started with.
    public let configuration: Configuration
    /// Port of the plain HTTP/1.1 listener.
    public let port: Int
    /// Port of the TLS listener (ALPN `h2`, `http/1.1`); 0 when ``Configuration/enableTLS`` is off.
    public let tlsPort: Int
    /// Port of the h2c (prior knowledge) listener; 0 when ``Configuration/enableH2C`` is off.
    public let h2cPort: Int
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// `https://127.0.0.1:<tlsPort>`.
    public let tlsBaseURL: URL
    /// `https://127.0.0.1:<p>`: the same routes over TLS with the same server certificate, but the
    /// handshake requires a client certificate signed by the client CA
    /// (``clientCertificatePath``/``clientKeyPath``); the URL of `127.0.0.1:0` when
    /// ``Configuration/enableTLS`` is off.
    public let mutualTLSBaseURL: URL
    /// `https://127.0.0.1:<p>`: the same routes over TLS with the same server certificate, from a
    /// server that offers ALPN `http/1.1` only — an HTTPS server that does not speak HTTP/2. The URL
    /// of `127.0.0.1:0` when ``Configuration/enableTLS`` is off.
    public let http1TLSBaseURL: URL
    /// `http://127.0.0.1:<h2cPort>`: speak HTTP/2 with prior knowledge to it.
    public let h2cBaseURL: URL
    /// `http://127.0.0.1:<p>/`, where `p` is bound by a socket that never listens: connects are refused
    /// at once (TCP RST, `ECONNREFUSED`, curl exit 7), reliably, until ``shutdown()``.
    public let refusedURL: URL
    /// `http://127.0.0.1:<p>/`, where connects hang in SYN-SENT until the client's connect timeout
    /// (curl exit 28): a backlog-0 listener whose accept queue is full and never drained. Shared by
    /// every server in the process and never closed.
    public let blackholeURL: URL
    /// Port of the raw fault listener (see ``FaultRoute``).
    public let faultPort: Int
    /// Port of the listener that closes every connection at once (``FaultRoute/acceptThenClose``).
    let closingPort: Int
    /// Ports of the TLS fault listeners (see ``TLSFault``); empty when ``Configuration/enableTLS`` is off.
    let tlsFaultPorts: [TLSFault: Int]

    private let group: MultiThreadedEventLoopGroup
    private let recorder: StatsRecorder
    private let journal: RequestJournal
    private let holds: UploadHolds
    private let refusingPort: RefusingPort
    /// Guards shutdown; held while shutting down so a concurrent caller waits for the end too.
    private let isShutDown = NIOLockedValueBox(false)

    private init(
        configuration: Configuration, ports: [ListenerKind: Int], group: MultiThreadedEventLoopGroup,
        recorder: StatsRecorder, journal: RequestJournal, holds: UploadHolds, refusingPort: RefusingPort, blackholePort: Int,
        faultPorts: FaultPorts
    ) {
        self.configuration = configuration
        self.port = ports[.plain] ?? 0
        self.tlsPort = ports[.tls] ?? 0
        self.h2cPort = ports[.h2c] ?? 0
        self.baseURL = Self.loopbackURL(scheme: "http", port: self.port)
        self.tlsBaseURL = Self.loopbackURL(scheme: "https", port: self.tlsPort)
        self.mutualTLSBaseURL = Self.loopbackURL(scheme: "https", port: faultPorts.mutualTLS)
        self.http1TLSBaseURL = Self.loopbackURL(scheme: "https", port: faultPorts.http1TLS)
        self.h2cBaseURL = Self.loopbackURL(scheme: "http", port: self.h2cPort)
        self.refusedURL = Self.loopbackURL(scheme: "http", port: refusingPort.port, path: "/")
        self.blackholeURL = Self.loopbackURL(scheme: "http", port: blackholePort, path: "/")
        self.faultPort = faultPorts.raw
        self.closingPort = faultPorts.closing
        self.tlsFaultPorts = faultPorts.tls
        self.group = group
        self.recorder = recorder
        self.journal = journal
        self.holds = holds
        self.refusingPort = refusingPort
    }

    deinit {
        // A forgotten shutdown must not leak threads; nothing can wait here, so it happens in the background.
        let alreadyDown = self.isShutDown.withLockedValue { $0 }
        if !alreadyDown {
            self.refusingPort.close()
            self.group.shutdownGracefully { _ in }
        }
    }

    // MARK: Lifecycle

    /// Starts the listeners and returns once they all accept connections.
    ///
    /// - Throws: When a port cannot be bound (a fixed port in use), the certificates cannot be loaded,
    ///   or the refused/blackhole sockets cannot be set up.
    public static func start(_ configuration: Configuration = .init()) throws -> TestServer {
        let blackhole = try Blackhole.shared.get()
        let refusingPort = try RefusingPort()
        let recorder = StatsRecorder()
        let journal = RequestJournal()
        let holds = UploadHolds()
        let sslContext: NIOSSLContext?
        do {
            sslContext = configuration.enableTLS ? try TLSMaterial.serverContext.get() : nil
        } catch {
            refusingPort.close()
            throw error
        }
        let pipelines = ServerPipelines(
            stats: recorder, journal: journal, holds: holds, sslContext: sslContext,
            http2MaxConcurrentStreams: configuration.http2MaxConcurrentStreams
        )
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.eventLoopThreads))

        var listeners: [(ListenerKind, Int)] = [(.plain, configuration.port)]
        if configuration.enableTLS { listeners.append((.tls, configuration.tlsPort)) }
        if configuration.enableH2C { listeners.append((.h2c, configuration.h2cPort)) }

        var ports: [ListenerKind: Int] = [:]
        var faultPorts = FaultPorts()
        do {
            for (kind, port) in listeners {
                let channel = try Self.listen(on: port, kind: kind, group: group, pipelines: pipelines).wait()
                guard let bound = channel.localAddress?.port else {
                    throw ChannelError.unknownLocalAddress
                }
                ports[kind] = bound
            }
            faultPorts.raw = try Self.listenRaw(group: group) { FaultHandler() }
            faultPorts.closing = try Self.listenRaw(group: group) { CloseOnAcceptHandler() }
            if configuration.enableTLS {
                // A statistics recorder of their own: their connections are not the server's traffic.
                let faultStats = StatsRecorder()
                /// Starts one more TLS listener with `context` on a free port; returns the port.
                func listenTLS(_ context: NIOSSLContext) throws -> Int {
                    let pipelines = ServerPipelines(stats: faultStats, journal: journal, holds: holds, sslContext: context,
                                                    http2MaxConcurrentStreams: 100)
                    let channel = try Self.listen(on: 0, kind: .tls, group: group, pipelines: pipelines).wait()
                    guard let bound = channel.localAddress?.port else { throw ChannelError.unknownLocalAddress }
                    return bound
                }
                for (fault, context) in try TLSMaterial.faultContexts.get() {
                    faultPorts.tls[fault] = try listenTLS(context)
                }
                faultPorts.mutualTLS = try listenTLS(try TLSMaterial.mutualContext.get())
                faultPorts.http1TLS = try listenTLS(try TLSMaterial.http1Context.get())
            }
        } catch {
            group.shutdownGracefully { _ in }
            refusingPort.close()
            throw error
        }
        return TestServer(
            configuration: configuration, ports: ports, group: group, recorder: recorder, journal: journal, holds: holds,
            refusingPort: refusingPort, blackholePort: blackhole.port, faultPorts: faultPorts
        )
    }

    /// The ports of the fault listeners.
    struct FaultPorts {
        var raw = 0
        var closing = 0
        var tls: [TLSFault: Int] = [:]
        var mutualTLS = 0
        var http1TLS = 0
    }

    /// A raw TCP listener on 127.0.0.1 whose connections each get a new `handler()`; returns its port.
    private static func listenRaw<Handler: ChannelInboundHandler>(
        group: MultiThreadedEventLoopGroup, handler: @escaping @Sendable () -> Handler
    ) throws -> Int {
        let channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler()) }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        guard let bound = channel.localAddress?.port else { throw ChannelError.unknownLocalAddress }
        return bound
    }

    /// Closes every listener and connection and stops the event-loop threads; returns when all is closed.
    ///
    /// Idempotent: later calls return at once, concurrent ones wait for the first to finish. Must not be
    /// called on one of the server's own event-loop threads (for example from a route).
    public func shutdown() {
        self.isShutDown.withLockedValue { isShutDown in
            guard !isShutDown else { return }
            isShutDown = true
            self.refusingPort.close()
            // Not `syncShutdownGracefully()`: it waits for a callback on the global dispatch queue, whose
            // few Linux worker threads may all be blocked (tests calling this from the cooperative pool),
            // and libdispatch only adds a thread after about a second. A private serial queue gets its
            // own (overcommit) thread at once.
            let closed = DispatchSemaphore(value: 0)
            self.group.shutdownGracefully(queue: DispatchQueue(label: "CurlewTestServer.shutdown")) { _ in
                closed.signal()
            }
            closed.wait()
        }
    }

    /// ``shutdown()`` without blocking a Swift-concurrency thread: the blocking part runs on a thread of
    /// its own (a private serial queue, not the shared global pool).
    public func shutdownGracefully() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "CurlewTestServer.shutdownGracefully").async {
                self.shutdown()
                continuation.resume()
            }
        }
    }

    private static func listen(
        on port: Int, kind: ListenerKind, group: MultiThreadedEventLoopGroup, pipelines: ServerPipelines
    ) -> EventLoopFuture<Channel> {
        ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Room for a thousand clients connecting at once without SYN drops (capped by somaxconn).
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.maxMessagesPerRead, value: 64)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in pipelines.initialize(channel, kind: kind) }
            .bind(host: "127.0.0.1", port: port)
    }

    // MARK: Statistics

    /// A snapshot of the counters (thread-safe; see ``Stats`` for when each one moves).
    public var stats: Stats {
        self.recorder.snapshot
    }

    /// How many requests the server received for a key of ``Route/flaky(key:failures:status:retryAfter:)``,
    /// ``Route/events(key:count:dropAfter:retryMilliseconds:)`` or ``Route/holdUpload(key:)`` (counted
    /// when the whole request arrived; for `.holdUpload`, when its head did).
    public func requests(forKey key: String) -> Int {
        self.recorder.requests(forKey: key)
    }

    /// What the server wrote for the ``Route/firehose(key:bytes:)`` requests of `key` (zeros when none came).
    public func firehose(_ key: String) -> FirehoseRecord {
        self.recorder.firehose(forKey: key)
    }

    /// The `Last-Event-ID` of each ``Route/events(key:count:dropAfter:retryMilliseconds:)`` request of
    /// `key`, in the order they arrived (`nil` for a request without one).
    public func lastEventIDs(forKey key: String) -> [String?] {
        self.recorder.lastEventIDs(forKey: key)
    }

    /// Lets the ``Route/holdUpload(key:)`` requests of `key` read their bodies: those waiting now and
    /// any that come later.
    public func releaseUpload(_ key: String) {
        self.holds.release(key)
    }

    /// Sets every counter back to zero, except ``Stats/openConnections`` (connections still open stay
    /// counted, and ``Stats/maxOpenConnections`` restarts from them).
    public func resetStats() {
        self.recorder.reset()
    }

    /// Polls ``stats`` every few milliseconds until `predicate` holds or `timeout` passes.
    ///
    /// - Returns: Whether `predicate` held before the timeout.
    public func waitForStats(timeout: Duration = .seconds(5), until predicate: (Stats) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if predicate(self.stats) { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    // MARK: Tagged requests

    /// The request header that makes the server keep a ``TaggedRequest`` record of a request, under the
    /// header's value (any value; a UUID keeps a test's records its own).
    public static let tagHeaderName = "x-curlew-test-tag"

    /// What the server saw of the requests tagged `tag`, in the order they arrived (empty when none
    /// came). A request is recorded once its head and body have been received; its ``TaggedRequest/outcome``
    /// moves on when the response ends, or when the connection closes first.
    public func requests(tagged tag: String) -> [TaggedRequest] {
        self.journal.requests(tagged: tag)
    }

    // MARK: URLs

    /// The URL of `route` on the plain listener, or on the TLS listener when `tls` is set.
    public func url(_ route: Route, tls: Bool = false) -> URL {
        self.url(path: route.path, tls: tls)
    }

    /// The URL of `route` on the plain listener under **another origin**: host `localhost` instead
    /// of `127.0.0.1`, same port. Browsers, curl's cookie engine and Curlew's redirect rules treat
    /// the two as different hosts, so this tests what must not cross origins (credentials on a
    /// redirect, cookies) without a second server. curl resolves `localhost` to the loopback
    /// addresses itself, without asking a resolver; the connection ends up at 127.0.0.1.
    public func otherOriginURL(_ route: Route) -> URL {
        URL(string: "http://localhost:\(self.port)\(route.path)") ?? self.url(route)
    }

    /// The URL of `route` on the TLS listener that speaks HTTP/1.1 only (``http1TLSBaseURL``).
    public func http1TLSURL(_ route: Route) -> URL {
        Self.loopbackURL(scheme: "https", port: self.http1TLSBaseURL.port ?? 0, path: route.path)
    }

    /// The URL of `route` on the h2c listener (HTTP/2 with prior knowledge only).
    public func h2cURL(_ route: Route) -> URL {
        self.h2cURL(path: route.path)
    }

    /// The URL of a raw path (with query), like `"/bytes/13"`, on the plain or TLS listener.
    ///
    /// A missing leading `/` is added; characters a URL cannot hold are percent-encoded.
    public func url(path: String, tls: Bool = false) -> URL {
        Self.loopbackURL(scheme: tls ? "https" : "http", port: tls ? self.tlsPort : self.port, path: path)
    }

    /// The URL of a malformed reply on the raw fault listener (``FaultRoute/acceptThenClose``: on the
    /// listener that closes every connection at once).
    public func faultURL(_ route: FaultRoute) -> URL {
        let port = route == .acceptThenClose ? self.closingPort : self.faultPort
        return Self.loopbackURL(scheme: "http", port: port, path: route.path)
    }

    /// The URL of a TLS failure (see ``TLSFault``), serving `/bytes/10` should the client get through.
    /// Needs ``Configuration/enableTLS``.
    public func url(_ fault: TLSFault) -> URL {
        switch fault {
        case .httpsToPlainPort:
            return Self.loopbackURL(scheme: "https", port: self.port, path: Route.bytes(10).path)
        case .httpToTLSPort:
            return Self.loopbackURL(scheme: "http", port: self.tlsPort, path: Route.bytes(10).path)
        case .selfSigned, .wrongHost, .expired:
            return Self.loopbackURL(scheme: "https", port: self.tlsFaultPorts[fault] ?? 0, path: Route.bytes(10).path)
        }
    }

    /// The URL of a raw path (with query) on the h2c listener.
    public func h2cURL(path: String) -> URL {
        Self.loopbackURL(scheme: "http", port: self.h2cPort, path: path)
    }

    private static func loopbackURL(scheme: String, port: Int, path: String = "") -> URL {
        let base = "\(scheme)://127.0.0.1:\(port)"
        guard !path.isEmpty else {
            return URL(string: base) ?? URL(fileURLWithPath: "/")
        }
        let absolutePath = path.hasPrefix("/") ? path : "/" + path
        if let url = URL(string: base + absolutePath) {
            return url
        }
        let encoded = URLPathEscaping.escape(absolutePath)
        return URL(string: base + encoded) ?? URL(string: base) ?? URL(fileURLWithPath: "/")
    }
}
