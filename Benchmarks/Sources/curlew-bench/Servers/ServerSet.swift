/// The servers of one benchmark run and which one serves each scenario.
///
/// The runner starts what it needs and stops exactly what it started: nginx (when chosen and installed)
/// for everything it can serve, the embedded server for the rest (slow responses; HTTP/2 if nginx
/// lacks it) or for everything. With `--url` it starts nothing.
final class ServerSet {
    /// Where a scenario's clients go.
    struct Assignment: Sendable, Hashable {
        /// The server.
        var endpoint: ServerEndpoint
        /// The URL every client of the scenario requests.
        var url: String
    }

    private(set) var nginx: NginxServer?
    private(set) var embedded: EmbeddedServer?
    private let external: ServerEndpoint?
    private let certificates: CertificateFiles?
    /// MatrixScenario ID → where it runs.
    private(set) var assignments: [String: Assignment] = [:]
    /// MatrixScenario ID → why it cannot run.
    private(set) var unavailable: [String: String] = [:]

    /// Starts the servers `scenarios` need and assigns each scenario a URL.
    ///
    /// - Parameters:
    ///   - choice: `--server`.
    ///   - external: The server of `--url`, if given (then nothing is started).
    ///   - delayMilliseconds: How long a slow response of each scenario takes.
    /// - Throws: ``ServerStartError`` when no server can be started for the plain HTTP scenarios, or nginx
    ///   was required and did not start.
    init(
        scenarios: [MatrixScenario], choice: ServerChoice, external: ServerEndpoint?,
        delayMilliseconds: (MatrixScenario) -> Int
    ) throws {
        self.external = external
        self.certificates = CertificateFiles.locate()
        if self.certificates == nil && external == nil {
            Console.log("curlew-bench: the test certificates were not found; HTTP/2 over TLS is skipped")
        }
        let primary: ServerEndpoint
        if let external {
            primary = external
        } else {
            primary = try self.startPrimary(choice)
        }
        for scenario in scenarios {
            let delay = delayMilliseconds(scenario)
            if let url = primary.url(for: scenario.resource, over: scenario.transport, delayMilliseconds: delay) {
                self.assignments[scenario.id] = Assignment(endpoint: primary, url: url)
                continue
            }
            guard external == nil else {
                switch scenario.transport {
                case .tls: self.unavailable[scenario.id] = "needs --tls-url"
                case .tlsHTTP1Only: self.unavailable[scenario.id] = "needs a TLS server without HTTP/2, which only the runner's own servers provide"
                case .plain: self.unavailable[scenario.id] = "the server of --url cannot serve it (it needs CurlewTestServer's /delay)"
                }
                continue
            }
            do {
                let server = try self.embeddedServer()
                if let url = server.endpoint.url(for: scenario.resource, over: scenario.transport, delayMilliseconds: delay) {
                    self.assignments[scenario.id] = Assignment(endpoint: server.endpoint, url: url)
                } else {
                    self.unavailable[scenario.id] = "no server with TLS (test certificates not found)"
                }
            } catch {
                self.unavailable[scenario.id] = "\(error)"
            }
        }
    }

    deinit {
        self.stop()
    }

    /// Stops every server this set started (never anything else).
    func stop() {
        self.nginx?.stop()
        self.nginx = nil
        self.embedded?.stop()
        self.embedded = nil
    }

    /// Every server in use, for the report.
    var endpoints: [ServerEndpoint] {
        var seen: [ServerEndpoint] = []
        for assignment in self.assignments.values.sorted(by: { $0.url < $1.url }) where !seen.contains(assignment.endpoint) {
            seen.append(assignment.endpoint)
        }
        return seen
    }

    private func startPrimary(_ choice: ServerChoice) throws -> ServerEndpoint {
        if choice != .embedded {
            if let executable = ExecutableLookup.tool("nginx") {
                do {
                    let nginx = try NginxServer.start(executable: executable, certificates: self.certificates)
                    self.nginx = nginx
                    Console.log("curlew-bench: server \(nginx.version) on \(nginx.endpoint.plainBase ?? "?")"
                        + (nginx.endpoint.tlsBase.map { " and \($0) (TLS, h2)" } ?? ""))
                    return nginx.endpoint
                } catch {
                    if choice == .nginx { throw error }
                    Console.log("curlew-bench: \(error); using the embedded server instead")
                }
            } else if choice == .nginx {
                throw ServerStartError(description: "nginx is not installed (try --server embedded)")
            } else {
                Console.log("curlew-bench: nginx is not installed; using the embedded server (CurlewTestServer)")
            }
        }
        return try self.embeddedServer().endpoint
    }

    /// The embedded server, started on first use.
    private func embeddedServer() throws -> EmbeddedServer {
        if let embedded { return embedded }
        let server = try EmbeddedServer.start(certificates: self.certificates)
        self.embedded = server
        Console.log("curlew-bench: server \(server.endpoint.label) on \(server.endpoint.plainBase ?? "?")"
            + (server.endpoint.tlsBase.map { " and \($0) (TLS, h2)" } ?? ""))
        return server
    }
}
