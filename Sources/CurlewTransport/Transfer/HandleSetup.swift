import HTTPTypes
internal import CCurl

/// What an easy handle is set up for, apart from the transfer it serves: every option that does
/// not name the transfer itself (its URL, its context pointer, its header list, its deadline).
///
/// A pooled handle remembers the setup it was last given. When the next transfer's setup is equal,
/// the handle keeps its options and only the per-transfer ones are set again, which spares a
/// `curl_easy_reset` and about twenty `curl_easy_setopt` calls per request; otherwise the handle
/// is reset and the whole setup applied. ``apply(to:socketContext:)`` is static in what it reads:
/// it sees only this value, so an option cannot depend on something the comparison misses.
///
/// Setups that carry secrets or state curl keeps in the handle (credentials, proxy credentials, a
/// client identity, a wire tracer, HSTS and Alt-Svc files) are never kept: their handle is reset (or
/// replaced, see ``EasyHandle/reset()``) when it returns to the pool. A cookie jar is kept: it lives in
/// the jar's share, not in the handle, and the next transfer must name the same jar to reuse it.
struct HandleSetup: Equatable {
    /// How the method and body are expressed to curl.
    enum Method: Equatable {
        /// `CURLOPT_HTTPGET`, with a custom method name for anything but GET.
        case noBody(customName: String?)
        /// `CURLOPT_NOBODY`.
        case head
        /// curl's POST machinery streaming the body through the read callback, with a custom
        /// method name for anything but POST.
        case body(customName: String?)
    }

    var method: Method
    var connectTimeout: Duration?
    /// With no byte moved for this long, curl fails the transfer (low-speed limit of 1 byte/s).
    var idleTimeout: Duration?
    var httpVersion: HTTPVersionPreference
    /// `CURLOPT_PIPEWAIT`: wait for a connection that may multiplex (https, or h2c).
    var waitsForMultiplexing: Bool
    var verification: TLSOptions.Verification
    var trustedRootsFile: String?
    /// Proxy (without credentials), Unix socket, connect-to rules, IP version, HSTS and Alt-Svc.
    var route: ConnectionRoute
    /// `CURLOPT_ACCEPT_ENCODING` with every encoding curl decodes.
    var acceptsEncodings: Bool
    var pinnedPublicKeys: String?
    var maximumUploadBytesPerSecond: Int64?
    var maximumDownloadBytesPerSecond: Int64?
    /// `CURLOPT_BUFFERSIZE`: how many bytes curl reads from the socket at once and hands to the write
    /// callback in one call; `nil` keeps curl's 16 KiB.
    var receiveBufferSize: Int?
    /// The cookie jar (`CURLOPT_SHARE` and curl's cookie engine). Not a secret of the handle's: a pooled
    /// handle keeps it for the next transfer with the same jar, and holds the jar (and its share)
    /// alive while it does; any other transfer's setup differs, and resets the handle.
    var cookieJar: CookieJar?
    /// Whether the handle may keep this setup in the pool (no secrets).
    var isReusable: Bool

    /// The setup of `attempt` of a transfer with `options`; `sendsCookies` is `false` for an attempt
    /// to another origin than the request's own (cookies ignore ports and, unless `Secure`, schemes,
    /// so curl alone would send them there).
    /// The receive buffer for a body that goes to a ``ResponseBodyStream`` with `bufferSize`: each
    /// read of curl's becomes one chunk, and every chunk may wake the consumer's task, so the reads
    /// are as large as the stream's buffer allows, between curl's default 16 KiB and 256 KiB
    /// (`Docs/Decisions/0030-stream-receive-buffer.md`).
    static func streamReceiveBufferSize(bufferSize: Int) -> Int {
        min(max(bufferSize, 16 << 10), 256 << 10)
    }

    init(options: TransferOptions, attempt: Attempt, sendsBody: Bool, sendsCookies: Bool = true,
         streamBufferSize: Int? = nil) {
        let method = attempt.method
        if sendsBody {
            self.method = .body(customName: method == .post ? nil : method.rawValue)
        } else if method == .head {
            self.method = .head
        } else {
            self.method = .noBody(customName: method == .get ? nil : method.rawValue)
        }
        self.connectTimeout = options.connectTimeout
        self.idleTimeout = options.idleTimeout
        self.httpVersion = options.httpVersion
        self.waitsForMultiplexing = Self.mayMultiplex(options, scheme: attempt.target.scheme)
        self.verification = options.tls.verification
        self.trustedRootsFile = options.tls.trustedRootsFile
        self.route = ConnectionRoute(options: options)
        self.acceptsEncodings = options.automaticDecompression && !attempt.headerFields.contains(.acceptEncoding)
        self.pinnedPublicKeys = options.tls.pinnedPublicKeys.isEmpty
            ? nil : options.tls.pinnedPublicKeys.map(\.description).joined(separator: ";")
        self.maximumUploadBytesPerSecond = options.maximumUploadBytesPerSecond.flatMap { $0 > 0 ? $0 : nil }
        self.maximumDownloadBytesPerSecond = options.maximumDownloadBytesPerSecond.flatMap { $0 > 0 ? $0 : nil }
        self.receiveBufferSize = streamBufferSize.map(Self.streamReceiveBufferSize(bufferSize:))
        self.cookieJar = sendsCookies ? options.cookieJar : nil
        self.isReusable = options.credentials == nil && options.wireTracer == nil
            && options.tls.clientCertificate == nil && self.route.isReusable
    }

    /// Whether a transfer may share a connection with others as an HTTP/2 stream, so waiting for a
    /// connection that says whether it multiplexes (`CURLOPT_PIPEWAIT`) makes sense.
    ///
    /// Only over TLS, where ALPN may choose h2, or with prior knowledge. On plain http the answer
    /// is always no, and every transfer started beside the first would wait for that first
    /// connection (its whole response, in libcurl 7.88) instead of opening its own.
    static func mayMultiplex(_ options: TransferOptions, scheme: String) -> Bool {
        switch options.httpVersion {
        case .http1_1: false
        case .automatic: scheme == "https"
        case .http2PriorKnowledge: true
        }
    }

    /// Whether curl's POST machinery carries a body.
    var usesBodyMechanics: Bool {
        if case .body = self.method { return true }
        return false
    }

    /// Sets every option of this setup on `easy`, which must be fresh or reset.
    func apply(to easy: EasyHandle, socketContext: UnsafeMutableRawPointer) throws(TransferError) {
        // Only http and https, ever: curl refuses anything else, including after redirects.
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_WRITEFUNCTION, callback: Transfer.writeCallback)
        try easy.set(CURLOPT_HEADERFUNCTION, callback: Transfer.headerCallback)
        try easy.setSocketCallbacks(open: MultiDriver.openSocketCallback, close: MultiDriver.closeSocketCallback,
                                    context: socketContext)
        if let jar = self.cookieJar {
            try easy.set(CURLOPT_SHARE, pointer: jar.share)
            try easy.set(CURLOPT_COOKIEFILE, "")  // no file: just the cookie engine, on the shared jar
        }
        switch self.method {
        case .head:
            try easy.set(CURLOPT_NOBODY, true)
        case .noBody(let customName):
            try easy.set(CURLOPT_HTTPGET, true)
            if let customName { try easy.set(CURLOPT_CUSTOMREQUEST, customName) }
        case .body(let customName):
            // Any method with a body goes through curl's POST path with a custom method name; that
            // streams the body through the read callback and never reads stdin.
            try easy.set(CURLOPT_POST, true)
            try easy.set(CURLOPT_READFUNCTION, callback: Transfer.readCallback)
            if let customName { try easy.set(CURLOPT_CUSTOMREQUEST, customName) }
        }
        if let timeout = self.connectTimeout {
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Transfer.milliseconds(timeout))
        }
        if let idle = self.idleTimeout {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, 1)
            try easy.set(CURLOPT_LOW_SPEED_TIME, max(1, (Transfer.milliseconds(idle) + 999) / 1000))
        }
        switch self.httpVersion {
        case .http1_1: try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        case .automatic: try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        case .http2PriorKnowledge: try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE))
        }
        if self.waitsForMultiplexing { try easy.set(CURLOPT_PIPEWAIT, true) }
        switch self.verification {
        case .full:
            break
        case .noHostnameVerification:
            try easy.set(CURLOPT_SSL_VERIFYHOST, 0)
        case .none:
            try easy.set(CURLOPT_SSL_VERIFYHOST, 0)
            try easy.set(CURLOPT_SSL_VERIFYPEER, false)
        }
        if let roots = self.trustedRootsFile { try easy.set(CURLOPT_CAINFO, roots) }
        try self.route.apply(to: easy)
        if self.acceptsEncodings { try easy.set(CURLOPT_ACCEPT_ENCODING, "") }
        if let pins = self.pinnedPublicKeys { try easy.set(CURLOPT_PINNEDPUBLICKEY, pins) }
        if let rate = self.maximumUploadBytesPerSecond { try easy.set(CURLOPT_MAX_SEND_SPEED_LARGE, offset: rate) }
        if let rate = self.maximumDownloadBytesPerSecond { try easy.set(CURLOPT_MAX_RECV_SPEED_LARGE, offset: rate) }
        if let size = self.receiveBufferSize { try easy.set(CURLOPT_BUFFERSIZE, size) }
    }
}
