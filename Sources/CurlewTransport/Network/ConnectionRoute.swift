internal import CCurl

/// Where a transfer's connections go and what they remember: the proxy (without its credentials),
/// a Unix socket, connect-to rules and address overrides, the IP version, the happy-eyeballs delay,
/// and the HSTS and Alt-Svc files. Part of a ``HandleSetup``, so a pooled handle set up for another
/// route is reset; the proxy's credentials are applied by ``Transfer/configureProxyCredentials(_:)``.
struct ConnectionRoute: Equatable {
    var proxy: ProxyConfiguration
    var unixSocket: UnixSocketAddress?
    var connectTo: [ConnectTo]
    var dnsOverride: [String: String]
    var ipVersion: IPVersionPreference
    var happyEyeballsDelay: Duration?
    var hstsFile: String?
    var altSvcFile: String?
    /// Whether the proxy setting carried credentials (kept out of ``proxy``).
    var proxyHasCredentials: Bool

    init(options: TransferOptions) {
        if options.proxy.carriesCredentials {
            self.proxy = options.proxy.splittingCredentials.configuration
            self.proxyHasCredentials = true
        } else {
            self.proxy = options.proxy
            self.proxyHasCredentials = false
        }
        self.unixSocket = options.unixSocket
        self.connectTo = options.connectTo
        self.dnsOverride = options.dnsOverride
        self.ipVersion = options.ipVersion
        self.happyEyeballsDelay = options.happyEyeballsDelay
        self.hstsFile = options.hstsFile
        self.altSvcFile = options.altSvcFile
    }

    /// Whether a handle may keep this route in the pool: not with proxy credentials (a secret), nor
    /// with HSTS or Alt-Svc files, whose caches curl keeps in the handle even across
    /// `curl_easy_reset` (such a handle is replaced instead, see ``EasyHandle/reset()``).
    var isReusable: Bool {
        !self.proxyHasCredentials && self.hstsFile == nil && self.altSvcFile == nil
    }

    /// Sets the route's options on `easy`.
    func apply(to easy: EasyHandle) throws(TransferError) {
        switch self.proxy {
        case .environment:
            break
        case .none:
            try easy.set(CURLOPT_PROXY, "")
        case .url(let url):
            try ProxyURL.validate(url)
            try easy.set(CURLOPT_PROXY, url)
        case .server(let server):
            try ProxyURL.validate(server.url)
            try ProxyURL.validate(bypass: server.bypass)
            try Transfer.refuseNUL(in: [server.tls.trustedRootsFile], what: "The proxy's trusted roots file", url: nil)
            try easy.set(CURLOPT_PROXY, server.url)
            if !server.bypass.isEmpty { try easy.set(CURLOPT_NOPROXY, server.bypass.joined(separator: ",")) }
            switch server.tls.verification {
            case .full:
                break
            case .noHostnameVerification:
                try easy.set(CURLOPT_PROXY_SSL_VERIFYHOST, 0)
            case .none:
                try easy.set(CURLOPT_PROXY_SSL_VERIFYHOST, 0)
                try easy.set(CURLOPT_PROXY_SSL_VERIFYPEER, false)
            }
            if let roots = server.tls.trustedRootsFile { try easy.set(CURLOPT_PROXY_CAINFO, roots) }
        }
        if let socket = self.unixSocket {
            try socket.validate()
            switch socket {
            case .path(let path): try easy.set(CURLOPT_UNIX_SOCKET_PATH, path)
            case .abstract(let name): try easy.set(CURLOPT_ABSTRACT_UNIX_SOCKET, name)
            }
        }
        if !self.connectTo.isEmpty || !self.dnsOverride.isEmpty {
            let rules = try ConnectRules(connectTo: self.connectTo, dnsOverride: self.dnsOverride)
            let list = CurlHeaderList()
            for line in rules.lines { list.append(line) }
            // curl reads the list on every transfer and does not copy it: the handle keeps it.
            easy.keep(list)
            try easy.set(CURLOPT_CONNECT_TO, list: list.raw)
        }
        switch self.ipVersion {
        case .any: break
        case .ipv4Only: try easy.set(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V4))
        case .ipv6Only: try easy.set(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V6))
        }
        if let delay = self.happyEyeballsDelay {
            guard delay >= .zero else {
                throw TransferError(.invalidRequest, "The happy-eyeballs delay \(delay) is negative.")
            }
            try easy.set(CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS, delay == .zero ? 0 : Transfer.milliseconds(delay))
        }
        try self.applyCaches(to: easy)
    }

    /// HSTS and Alt-Svc: curl reads the Alt-Svc file now and the HSTS file when the transfer
    /// starts; it writes both when the handle is cleaned up, which ``EasyHandle/reset()`` does for
    /// a handle marked ``EasyHandle/keepsCacheFiles``.
    private func applyCaches(to easy: EasyHandle) throws(TransferError) {
        guard self.hstsFile != nil || self.altSvcFile != nil else { return }
        try Transfer.refuseNUL(in: [self.hstsFile, self.altSvcFile], what: "The HSTS or Alt-Svc file name", url: nil)
        easy.keepsCacheFiles = true
        if let file = self.hstsFile {
            guard !file.isEmpty else { throw TransferError(.invalidRequest, "The HSTS file name is empty.") }
            try easy.set(CURLOPT_HSTS_CTRL, ccurl_hsts_enable())
            try easy.set(CURLOPT_HSTS, file)
        }
        if let file = self.altSvcFile {
            guard !file.isEmpty else { throw TransferError(.invalidRequest, "The Alt-Svc file name is empty.") }
            try easy.set(CURLOPT_ALTSVC_CTRL, LibCurl.altSvcVersions)
            try easy.set(CURLOPT_ALTSVC, file)
        }
    }
}
