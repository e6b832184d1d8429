extension TestServer {
    /// How a ``TestServer`` is started: threads, which listeners, fixed ports and HTTP/2 limits.
    ///
    /// The defaults suit the test suites: one event-loop thread (the tests share two cores with the
    /// client under test), every listener on, every port chosen by the kernel.
    public struct Configuration: Sendable, Hashable {
        /// Number of SwiftNIO event-loop threads serving every listener. Values below 1 are treated as 1.
        public var eventLoopThreads: Int
        /// Whether to start the TLS listener (ALPN `h2` and `http/1.1`, the committed test certificates).
        public var enableTLS: Bool
        /// Whether to start the cleartext HTTP/2 listener (h2c with prior knowledge).
        public var enableH2C: Bool
        /// Port of the plain HTTP/1.1 listener; 0 lets the kernel choose a free one.
        public var port: Int
        /// Port of the TLS listener; 0 lets the kernel choose a free one.
        public var tlsPort: Int
        /// Port of the h2c listener; 0 lets the kernel choose a free one.
        public var h2cPort: Int
        /// `SETTINGS_MAX_CONCURRENT_STREAMS` announced on every HTTP/2 connection (TLS and h2c).
        public var http2MaxConcurrentStreams: Int

        /// Creates a configuration; every parameter has the default the test suites want.
        public init(
            eventLoopThreads: Int = 1,
            enableTLS: Bool = true,
            enableH2C: Bool = true,
            port: Int = 0,
            tlsPort: Int = 0,
            h2cPort: Int = 0,
            http2MaxConcurrentStreams: Int = 100
        ) {
            self.eventLoopThreads = eventLoopThreads
            self.enableTLS = enableTLS
            self.enableH2C = enableH2C
            self.port = port
            self.tlsPort = tlsPort
            self.h2cPort = h2cPort
            self.http2MaxConcurrentStreams = http2MaxConcurrentStreams
        }
    }
}
