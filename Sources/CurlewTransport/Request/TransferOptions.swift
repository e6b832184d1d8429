import Foundation
import HTTPTypes

/// How one transfer behaves: timeouts, redirects, protocol, TLS, proxy and limits.
///
/// The defaults are what a careful HTTP client does: connect and idle timeouts of 60 seconds (like
/// URLSession's request timeout), up to 10 redirects between `http` and `https` URLs only, HTTP/2
/// when a TLS server offers it, certificate and host name verification on, decompression on.
///
/// They also hold against hostile responses: a body collected in memory may have at most 64 MiB
/// (``maximumInMemoryBodySize``) and may expand at most 100-fold while it is decompressed
/// (``decompressionLimit``, which holds bodies streamed to a file too); a response head may have at
/// most 96 KiB (``maximumResponseHeadSize``). A body streamed to a file has no size limit unless
/// ``maximumResponseBodySize`` sets one. Past a limit the transfer fails with
/// ``TransferError/Code/responseTooLarge`` (or ``TransferError/Code/responseHeadTooLarge``) instead
/// of growing without bound. A file destination is replaced only by the body of a response whose
/// status is in ``fileReplacementStatusCodes`` (2xx by default).
public struct TransferOptions: Sendable, Hashable {
    /// The longest time to establish the connection (TCP and TLS). `nil` waits as long as the OS does.
    public var connectTimeout: Duration? = .seconds(60)
    /// The longest time the whole transfer may take, from ``Transfer/start()`` to the last body byte:
    /// across redirects and resumes, and including any wait for a connection (behind the per-host
    /// limit, or for a first connection to a host to say whether it multiplexes). Time spent paused
    /// does not count. `nil`: no limit.
    public var timeout: Duration?
    /// Fail when no byte has moved for this long (curl's low-speed check, whole seconds, at least 1).
    /// `nil` disables the check.
    public var idleTimeout: Duration? = .seconds(60)
    /// Whether and how far redirects are followed.
    public var redirects: RedirectPolicy = .follow(maximum: 10)
    /// Which HTTP versions to speak.
    public var httpVersion: HTTPVersionPreference = .automatic
    /// Certificate verification and trusted roots.
    public var tls: TLSOptions = TLSOptions()
    /// Which proxy to use.
    public var proxy: ProxyConfiguration = .environment
    /// Send the requests to this Unix domain socket instead of connecting to the URL's host over
    /// TCP; the URL still names the request (`Host`, path). A proxy is not used then. `nil` (the
    /// default): TCP. See ``UnixSocketAddress``.
    public var unixSocket: UnixSocketAddress?
    /// Fixed addresses for host names, instead of asking DNS (AsyncHTTPClient's `dnsOverride`):
    /// `["api.example.com": "127.0.0.1"]` connects to 127.0.0.1 for any port of that host, while
    /// `Host`, TLS's SNI and the certificate check keep the name. Keys are host names, values IPv4
    /// or IPv6 addresses. Only this transfer's connections use them: another transfer of the same
    /// engine without the override neither resolves the name this way nor reuses such a
    /// connection (see ``ConnectTo``, which they are made of). Empty by default.
    public var dnsOverride: [String: String] = [:]
    /// Rules that send connections for a host and port elsewhere while the request keeps its URL
    /// (`CURLOPT_CONNECT_TO`); checked before ``dnsOverride``, the first match applies. Empty by
    /// default.
    public var connectTo: [ConnectTo] = []
    /// Which IP versions the transfer may connect over (`CURLOPT_IPRESOLVE`); both by default.
    public var ipVersion: IPVersionPreference = .any
    /// How long a connection attempt over IPv6 runs alone before one over IPv4 starts beside it,
    /// for a host that has both ("happy eyeballs", RFC 8305; `CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS`).
    /// `nil` (the default): curl's 200 ms.
    public var happyEyeballsDelay: Duration?
    /// A file where hosts that require HTTPS are remembered (HSTS, RFC 6797; curl's format):
    /// after a host sent `Strict-Transport-Security` over HTTPS, an `http://` URL to it goes out as
    /// `https://` (the response's ``TransferResponse/url`` says so). Host names only: IP addresses
    /// are never upgraded. The file is read when each transfer starts and written when it ends,
    /// so any number of engines and processes can share it; two transfers that end at the same
    /// time may lose what one of them learnt (the last writer wins; the file stays whole). A
    /// transfer that uses it gets a fresh curl handle afterwards. `nil` (the default): no HSTS.
    public var hstsFile: String?
    /// A file where alternative services are remembered (`Alt-Svc`, RFC 7838; curl's format): an
    /// `https://` request to a host that announced one goes to it, in the HTTP version it named
    /// (HTTP/1.1 or HTTP/2; HTTP/3 only with a libcurl that has it, see ``LibCurl/supportsHTTP3``).
    /// Not used for hosts that a ``ConnectTo`` rule or ``dnsOverride`` already sends elsewhere.
    /// Read and written as ``hstsFile`` is. `nil` (the default): announcements are ignored.
    public var altSvcFile: String?
    /// Fail with ``TransferError/Code/responseTooLarge`` when the body is longer, whatever its
    /// destination (memory or a file). `nil` (the default): no limit beyond
    /// ``maximumInMemoryBodySize`` for bodies collected in memory.
    public var maximumResponseBodySize: Int64?
    /// Fail with ``TransferError/Code/responseTooLarge`` when a body collected in memory
    /// (``ResponseDestination/memory``) grows past this many bytes (decoded). 64 MiB by default;
    /// raise it, or set `nil` to lift it. Bodies streamed to a file are not affected: download
    /// large bodies to a file (``ResponseDestination/file(_:)``).
    public var maximumInMemoryBodySize: Int64? = 64 << 20
    /// How far a compressed body may expand while it is decoded (see ``DecompressionLimit``), in
    /// memory or streamed to a file alike: a few kilobytes must not fill a disk any more than memory.
    /// `.ratio(100)` by default.
    public var decompressionLimit: DecompressionLimit = .ratio(100)
    /// The statuses whose body replaces a file destination (``ResponseDestination/file(_:)``);
    /// 200–299 by default. A response with any other status leaves the destination exactly as it
    /// was (absent, or its old bytes): it is delivered with no ``TransferResponse/fileURL`` and the
    /// first bytes of its body (up to ``ResponseDestination/retainedErrorBodySize``) in
    /// ``TransferResponse/body``, so that an error page never overwrites a user's file yet can still
    /// be shown.
    public var fileReplacementStatusCodes = IndexSet(integersIn: 200..<300)
    /// Fail with ``TransferError/Code/responseHeadTooLarge`` when the status line and headers of
    /// one response are longer than this many bytes.
    public var maximumResponseHeadSize: Int = 96 * 1024
    /// Ask for compressed bodies (`Accept-Encoding`) and decode them transparently.
    ///
    /// The request offers every encoding libcurl decodes, as libcurl lists them (for example
    /// `deflate, gzip, br, zstd`). A request that sets `Accept-Encoding` itself is sent with its own
    /// value, and its body is delivered as it arrives, not decoded.
    ///
    /// A paused transfer whose body is encoded restarts from the beginning when resumed, because
    /// byte ranges address the encoded body.
    public var automaticDecompression: Bool = true
    /// The most request body bytes per second to send (`CURLOPT_MAX_SEND_SPEED_LARGE`), averaged
    /// over the transfer. `nil` (the default): no limit.
    public var maximumUploadBytesPerSecond: Int64?
    /// The most response body bytes per second to receive (`CURLOPT_MAX_RECV_SPEED_LARGE`), averaged
    /// over the transfer. `nil` (the default): no limit.
    public var maximumDownloadBytesPerSecond: Int64?
    /// A user name and password curl answers HTTP authentication challenges with (Basic, Digest).
    /// Sent only to the origin (scheme, host, port) of the request itself, never to another origin
    /// a redirect leads to. `nil` (the default): none.
    public var credentials: TransferCredentials?
    /// Where cookies are kept: responses' `Set-Cookie` are stored in the jar and matching cookies are
    /// sent with this and every other request that uses the same jar. Like ``credentials``, the jar
    /// serves only the origin of the request itself: a redirect to another origin neither sends nor
    /// stores cookies. `nil` (the default): cookies are neither stored nor sent (a `Cookie` header set
    /// by hand still is).
    public var cookieJar: CookieJar?
    /// Header fields whose values are secrets, besides `Authorization`, `Proxy-Authorization` and
    /// `Cookie` (always secrets): dropped on a redirect to another origin, and redacted by the
    /// ``wireTracer`` and `curlDescription`. Empty by default; a request serializer adds the names
    /// it was told are secret.
    public var secretHeaderNames: Set<HTTPField.Name> = []
    /// Receives what curl says about the exchange with the server (`CURLOPT_DEBUGFUNCTION`),
    /// credentials redacted. `nil` (the default): curl is not even asked, which costs nothing.
    public var wireTracer: WireTracer?

    /// Creates the default options.
    public init() {}
}

/// Whether a transfer follows redirects (301, 302, 303, 307, 308).
///
/// Curlew follows redirects itself rather than letting curl do it, so that it can: refuse any target
/// that is not `http` or `https`; turn POST into GET on 301/302 and anything but HEAD into GET on 303
/// (as browsers and URLSession do) while 307/308 keep the method and body; drop credentials
/// (`Authorization`, `Cookie`, `Proxy-Authorization`, ``TransferOptions/secretHeaderNames``) when
/// the origin changes; and let a ``TransferDelegate`` veto or rewrite each hop.
public enum RedirectPolicy: Sendable, Hashable {
    /// Do not follow: the 3xx response is the result.
    case none
    /// Follow at most `maximum` redirects, then fail with ``TransferError/Code/tooManyRedirects``.
    case follow(maximum: Int)
}

/// Which HTTP version a transfer speaks.
public enum HTTPVersionPreference: Sendable, Hashable {
    /// HTTP/1.1 only.
    case http1_1
    /// HTTP/2 when a TLS server offers it through ALPN, HTTP/1.1 otherwise (curl's default).
    case automatic
    /// HTTP/2 from the first byte, also without TLS (h2c, "prior knowledge").
    ///
    /// libcurl before 8.0 cannot reuse such a connection (see ``LibCurl/supportsPriorKnowledgeReuse``).
    case http2PriorKnowledge
}

/// How the server's TLS certificate is checked.
public struct TLSOptions: Sendable, Hashable {
    /// How strictly to verify the server's certificate. Verification is on by default.
    public enum Verification: Sendable, Hashable {
        /// Verify the chain against the trusted roots and the host name (the default).
        case full
        /// Verify the chain but not the host name.
        case noHostnameVerification
        /// Verify nothing. Only for tests against throwaway servers.
        case none
    }

    /// How strictly to verify.
    public var verification: Verification = .full
    /// A PEM file of trusted root certificates to use instead of the system's.
    public var trustedRootsFile: String?
    /// The public keys the server's certificate may have (`CURLOPT_PINNEDPUBLICKEY`); empty (the
    /// default): any. With pins, a server whose key is none of them fails the transfer with
    /// ``TransferError/Code/secureConnectionFailed`` (curl code 90), whatever the verification.
    public var pinnedPublicKeys: [PublicKeyPin] = []
    /// The certificate and key to present when the server asks for one (mutual TLS); `nil` (the
    /// default): none.
    public var clientCertificate: ClientCertificate?

    /// Creates options with full verification against the system's roots.
    public init(verification: Verification = .full, trustedRootsFile: String? = nil) {
        self.verification = verification
        self.trustedRootsFile = trustedRootsFile
    }
}

/// Which proxy a transfer goes through.
public enum ProxyConfiguration: Sendable, Hashable {
    /// Honour `http_proxy`, `https_proxy` and `no_proxy` from the environment, as curl and URLSession do.
    case environment
    /// Connect directly, whatever the environment says.
    case none
    /// Use this proxy URL, e.g. `"http://proxy.example:3128"` (any scheme ``ProxyServer`` takes;
    /// credentials in it are treated as ``ProxyServer/credentials`` are).
    case url(String)
    /// Use this proxy, with credentials, a bypass list and TLS options (see ``ProxyServer``).
    case server(ProxyServer)
}
