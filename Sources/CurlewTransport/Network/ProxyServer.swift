import Foundation

/// A proxy server and how to use it: ``ProxyConfiguration/server(_:)``.
///
/// ```swift
/// var proxy = ProxyServer(url: "http://proxy.internal:3128")
/// proxy.credentials = TransferCredentials(user: "ada", password: secret)
/// proxy.bypass = ["localhost", ".internal"]
/// request.options.proxy = .server(proxy)
/// ```
///
/// The URL's scheme says what the proxy speaks: `http` (the default when there is none), `https`
/// (TLS to the proxy itself, checked as ``tls`` says), `socks4`, `socks4a`, `socks5`, or `socks5h`
/// (SOCKS5 with the proxy resolving the host name: the only way to reach names only the proxy
/// knows, and no DNS query leaves the client). An `https` URL goes through an HTTP proxy in a
/// `CONNECT` tunnel, so the proxy sees the host and port but not the exchange.
///
/// **Credentials are a secret.** They go to the proxy only (`Proxy-Authorization`, or the SOCKS5
/// user/password exchange); never to the server, never into ``description``, a `curlDescription`
/// or a ``WireTracer``'s events. A transfer that carries them does not leave them on a pooled
/// handle. Credentials in the URL (`http://user:password@proxy:3128`) are taken out of it and used
/// the same way; ``credentials``, when set, win.
public struct ProxyServer: Sendable, Hashable, CustomStringConvertible {
    /// The proxy's URL: `scheme://host:port`.
    public var url: String
    /// The user name and password the proxy asks for (HTTP Basic or Digest, as their
    /// ``TransferCredentials/schemes`` allow; SOCKS5 user/password); `nil` (the default): none.
    public var credentials: TransferCredentials?
    /// Hosts reached directly, not through the proxy (`CURLOPT_NOPROXY`): a name matches itself
    /// and its subdomains (`example.com` and `.example.com` both match `api.example.com`), an IP
    /// address or a CIDR block (`10.0.0.0/8`) matches the addresses in it, and `*` matches every
    /// host. Empty (the default): every request goes through the proxy.
    public var bypass: [String]
    /// How the TLS connection to an `https` proxy is checked (nothing else uses it).
    public var tls: ProxyTLSOptions

    /// Creates a proxy setting.
    public init(url: String, credentials: TransferCredentials? = nil, bypass: [String] = [],
                tls: ProxyTLSOptions = ProxyTLSOptions()) {
        self.url = url
        self.credentials = credentials
        self.bypass = bypass
        self.tls = tls
    }

    /// Creates a proxy setting from a URL that may hold credentials
    /// (`http://user:password@proxy:3128`): they become ``credentials`` (percent-decoded, for
    /// HTTP Basic) and leave the URL.
    public init(parsing url: String) {
        let (bare, credentials) = ProxyURL.splitCredentials(url)
        self.init(url: bare, credentials: credentials)
    }

    /// The URL without credentials, the credentials' user, the bypass list; never the password.
    public var description: String {
        var text = "ProxyServer(\(ProxyURL.redacting(self.url))"
        if let credentials = self.credentials { text += ", user: \(credentials.user), password: <redacted>" }
        if !self.bypass.isEmpty { text += ", bypass: \(self.bypass.joined(separator: ","))" }
        return text + ")"
    }
}

/// How the TLS connection to an `https` proxy is checked: like ``TLSOptions``, but for the proxy's
/// certificate (`CURLOPT_PROXY_SSL_VERIFYPEER`, `CURLOPT_PROXY_SSL_VERIFYHOST`, `CURLOPT_PROXY_CAINFO`).
public struct ProxyTLSOptions: Sendable, Hashable {
    /// How strictly the proxy's certificate is verified; full verification by default.
    public var verification: TLSOptions.Verification
    /// A PEM file of trusted root certificates for the proxy's certificate, instead of the system's.
    public var trustedRootsFile: String?

    /// Creates options with full verification against the system's roots.
    public init(verification: TLSOptions.Verification = .full, trustedRootsFile: String? = nil) {
        self.verification = verification
        self.trustedRootsFile = trustedRootsFile
    }
}

/// What Curlew reads from a proxy URL: its scheme, and the credentials it may hold.
enum ProxyURL {
    /// The schemes curl speaks to a proxy.
    static let schemes: Set<String> = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

    /// `url` without its user information, and the credentials that were in it (percent-decoded);
    /// `url` itself and `nil` when it has none.
    static func splitCredentials(_ url: String) -> (url: String, credentials: TransferCredentials?) {
        guard url.utf8.contains(UInt8(ascii: "@")), var components = URLComponents(string: url),
              let user = components.user else {
            return (url, nil)
        }
        let password = components.password ?? ""
        components.user = nil
        components.password = nil
        return (components.string ?? url, TransferCredentials(user: user, password: password))
    }

    /// `url` with its password, if any, replaced by `<redacted>`.
    static func redacting(_ url: String) -> String {
        let (bare, credentials) = Self.splitCredentials(url)
        guard let credentials, let schemeEnd = bare.range(of: "://") else { return bare }
        return String(bare[..<schemeEnd.upperBound]) + "\(credentials.user):<redacted>@" + bare[schemeEnd.upperBound...]
    }

    /// Throws ``TransferError/Code/unsupportedURL`` unless `url` names one of ``schemes`` (or none,
    /// which curl reads as `http`), and ``TransferError/Code/invalidRequest`` for whitespace or
    /// control characters.
    static func validate(_ url: String) throws(TransferError) {
        guard !url.isEmpty, !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw TransferError(.invalidRequest, "The proxy URL is empty or contains whitespace or control characters.")
        }
        guard let schemeEnd = url.range(of: "://") else { return }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard Self.schemes.contains(scheme) else {
            throw TransferError(.unsupportedURL, "A proxy speaks http, https, socks4, socks4a, socks5 or socks5h, not \"\(scheme)\".")
        }
    }

    /// Throws ``TransferError/Code/invalidRequest`` for a bypass entry that is empty or holds a
    /// comma, whitespace or a control character (curl's list is comma-separated).
    static func validate(bypass: [String]) throws(TransferError) {
        for entry in bypass where entry.isEmpty || entry.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: ",") }) {
            throw TransferError(.invalidRequest, "The proxy bypass entry \"\(entry)\" is empty or holds a comma, whitespace or a control character.")
        }
    }
}

extension ProxyConfiguration {
    /// This configuration without credentials (what a ``HandleSetup`` may hold), and the credentials:
    /// a ``ProxyServer``'s own, else those in its URL.
    var splittingCredentials: (configuration: ProxyConfiguration, credentials: TransferCredentials?) {
        switch self {
        case .environment, .none:
            return (self, nil)
        case .url(let url):
            let (bare, credentials) = ProxyURL.splitCredentials(url)
            return credentials == nil ? (self, nil) : (.url(bare), credentials)
        case .server(var server):
            let (bare, inURL) = ProxyURL.splitCredentials(server.url)
            let credentials = server.credentials ?? inURL
            guard credentials != nil else { return (self, nil) }
            server.url = bare
            server.credentials = nil
            return (.server(server), credentials)
        }
    }

    /// Whether the configuration carries credentials (without splitting anything when it cannot).
    var carriesCredentials: Bool {
        switch self {
        case .environment, .none: false
        case .url(let url): url.utf8.contains(UInt8(ascii: "@")) && ProxyURL.splitCredentials(url).credentials != nil
        case .server(let server): server.credentials != nil || ProxyURL.splitCredentials(server.url).credentials != nil
        }
    }
}
