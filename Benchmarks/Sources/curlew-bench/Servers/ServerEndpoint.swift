/// A running HTTP server the clients talk to, as far as the runner needs to know it.
struct ServerEndpoint: Sendable, Hashable {
    /// Who serves.
    enum Kind: String, Codable, Sendable {
        /// nginx, started by the runner with a generated configuration.
        case nginx
        /// `CurlewTestServer` in a child process (`bench-server`).
        case embedded
        /// A server given with `--url`, not managed by the runner.
        case external
    }

    /// Which paths the server answers on (see ``Resource``).
    enum Layout: String, Codable, Sendable, CaseIterable {
        /// Files `/small`, `/64k`, `/16m`, `/64m`, `/1g` and `/post` (the nginx the runner configures).
        case nginx
        /// `CurlewTestServer` routes: `/bytes/N`, `/echo`, `/delay/N`.
        case embedded
    }

    /// Who serves.
    var kind: Kind
    /// Who serves, for people: `nginx/1.22.1`, `CurlewTestServer (bench-server)`, …
    var label: String
    /// `http://127.0.0.1:PORT` (HTTP/1.1), if any.
    var plainBase: String?
    /// `https://127.0.0.1:PORT` (TLS, ALPN h2 and http/1.1), if any.
    var tlsBase: String?
    /// `https://127.0.0.1:PORT` (TLS, ALPN http/1.1 only: a server without HTTP/2), if any.
    var http1TLSBase: String? = nil
    /// CA certificate that signed the TLS listener's certificate.
    var caFile: String?
    /// Which paths it answers on.
    var layout: Layout

    /// The URL of `resource` on this server over `transport`, or nil when it cannot serve it.
    func url(for resource: Resource, over transport: MatrixScenario.Transport, delayMilliseconds: Int) -> String? {
        let base: String?
        switch transport {
        case .plain: base = self.plainBase
        case .tls: base = self.tlsBase
        case .tlsHTTP1Only: base = self.http1TLSBase
        }
        guard let base else { return nil }
        switch self.layout {
        case .nginx:
            return resource.nginxPath.map { base + $0 }
        case .embedded:
            return base + resource.embeddedPath(delayMilliseconds: delayMilliseconds)
        }
    }
}
