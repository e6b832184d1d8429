import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL

/// How an accepted connection becomes HTTP: the same ``RouteHandler`` ends up behind every listener.
///
/// - plain: `configureHTTPServerPipeline` (pipelining assistance, protocol error handling) + handler.
/// - TLS: `NIOSSLServerHandler`, then `configureHTTP2SecureUpgrade`: ALPN `h2` → the HTTP/2 pipeline,
///   `http/1.1` or no ALPN → the plain pipeline.
/// - h2c: the HTTP/2 pipeline straight away (prior knowledge).
///
/// The HTTP/2 pipeline is `configureHTTP2Pipeline` whose stream initializer adds
/// `HTTP2FramePayloadToHTTP1ServerCodec` and the handler, so each stream looks like an HTTP/1 exchange;
/// then ``HTTP2PingRoundTrip``, for the streams that are cut on purpose.
struct ServerPipelines: Sendable {
    let stats: StatsRecorder
    let journal: RequestJournal
    let holds: UploadHolds
    let sslContext: NIOSSLContext?
    let http2MaxConcurrentStreams: Int

    func initialize(_ channel: Channel, kind: ListenerKind) -> EventLoopFuture<Void> {
        let stats = self.stats
        stats.connectionAccepted(on: kind)
        channel.closeFuture.whenComplete { _ in stats.connectionClosed() }
        do {
            switch kind {
            case .plain:
                try self.configureHTTP1(channel)
                return channel.eventLoop.makeSucceededVoidFuture()
            case .h2c:
                try self.configureHTTP2(channel)
                return channel.eventLoop.makeSucceededVoidFuture()
            case .tls:
                guard let sslContext = self.sslContext else {
                    return channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
                }
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                return channel.configureHTTP2SecureUpgrade(
                    h2ChannelConfigurator: { channel in
                        stats.tlsNegotiatedHTTP2()
                        return channel.eventLoop.makeCompletedFuture { try self.configureHTTP2(channel) }
                    },
                    http1ChannelConfigurator: { channel in
                        channel.eventLoop.makeCompletedFuture { try self.configureHTTP1(channel) }
                    }
                )
            }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    private func configureHTTP1(_ channel: Channel) throws {
        let sync = channel.pipeline.syncOperations
        try sync.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
        try sync.addHandler(RouteHandler(overHTTP2: false, stats: self.stats, journal: self.journal, holds: self.holds))
    }

    private func configureHTTP2(_ channel: Channel) throws {
        let stats = self.stats
        let journal = self.journal
        let holds = self.holds
        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: self.connectionConfiguration,
            streamConfiguration: Self.streamConfiguration,
            streamDelegate: HTTP2StreamCounter(eventLoop: channel.eventLoop, stats: stats)
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                let sync = stream.pipeline.syncOperations
                try sync.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try sync.addHandler(RouteHandler(overHTTP2: true, stats: stats, journal: journal, holds: holds))
            }
        }
        try channel.pipeline.syncOperations.addHandler(HTTP2PingRoundTrip())
    }

    /// Generous limits: test clients cancel and reset streams on purpose, which NIO's defaults
    /// (200 per 30 s) would treat as an attack.
    private var connectionConfiguration: NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: max(1, self.http2MaxConcurrentStreams)),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 20),
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        configuration.targetWindowSize = 4 << 20
        configuration.maximumConnectionGlitches = 100_000
        configuration.maximumRecentlyResetStreams = 10_000
        configuration.controlFrameRateLimit.maximumCount = 100_000
        return configuration
    }

    private static let streamConfiguration: NIOHTTP2Handler.StreamConfiguration = {
        var configuration = NIOHTTP2Handler.StreamConfiguration()
        configuration.targetWindowSize = 1 << 20
        configuration.outboundBufferSizeHighWatermark = 256 * 1024
        configuration.outboundBufferSizeLowWatermark = 128 * 1024
        configuration.streamResetFrameRateLimit.maximumCount = 100_000
        configuration.streamErrorRateLimit.maximumCount = 100_000
        return configuration
    }()
}
