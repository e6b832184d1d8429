import ArgumentParser

/// Which server the clients talk to.
struct ServerOptions: ParsableArguments {
    @Option(help: "auto: nginx when installed, else the embedded server; nginx: nginx or fail; embedded: CurlewTestServer in a child process.")
    var server: ServerChoice = .auto

    @Option(help: ArgumentHelp("Use the server already running at this base URL (http://HOST:PORT) instead of starting one.", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("With --url: the HTTPS base URL for the HTTP/2 scenario.", valueName: "url"))
    var tlsUrl: String?

    @Option(help: "With --url: the server's paths; embedded: CurlewTestServer's /bytes/N, /echo, /delay/N; nginx: /small, /64k, /16m, /64m, /1g, /post.")
    var urlLayout: ServerEndpoint.Layout = .embedded

    @Option(help: ArgumentHelp("With --tls-url: the CA certificate clients trust.", valueName: "path"))
    var caFile: String?

    /// Rejects values that make no sense before anything starts.
    func validate() throws {
        for (name, value) in [("--url", self.url), ("--tls-url", self.tlsUrl)] {
            guard let value else { continue }
            guard value.hasPrefix("http://") || value.hasPrefix("https://") else {
                throw ValidationError("\(name) must start with http:// or https://")
            }
        }
        if self.url == nil && (self.tlsUrl != nil || self.caFile != nil) {
            throw ValidationError("--tls-url and --ca-file go with --url")
        }
    }

    /// The server of `--url`, if given.
    var external: ServerEndpoint? {
        guard let url else { return nil }
        let trimmed = { (text: String) in text.hasSuffix("/") ? String(text.dropLast()) : text }
        return ServerEndpoint(
            kind: .external, label: "external server at \(url)", plainBase: trimmed(url),
            tlsBase: self.tlsUrl.map(trimmed), caFile: self.caFile, layout: self.urlLayout
        )
    }
}

extension ServerEndpoint.Layout: ExpressibleByArgument {}
