import Foundation

/// `CurlewTestServer` in a child process (`bench-server`, built beside the runner): the server when nginx
/// is missing, and the one for slow responses (`/delay/N`), which nginx cannot give.
final class EmbeddedServer {
    /// Where clients reach it.
    let endpoint: ServerEndpoint
    /// The `bench-server` process.
    private let process: ChildProcess
    /// Its stderr log (removed by ``stop()``).
    private let folder: String

    private init(endpoint: ServerEndpoint, process: ChildProcess, folder: String) {
        self.endpoint = endpoint
        self.process = process
        self.folder = folder
    }

    /// Starts `bench-server` (one event-loop thread, like nginx's one worker; up to 1,024 HTTP/2 streams
    /// per connection) and returns once it has printed its `READY` line.
    ///
    /// Its stdin is a pipe the runner holds: should the runner die, the server sees end of input and exits.
    ///
    /// - Throws: ``ServerStartError`` when `bench-server` is missing or does not get ready within 30 s.
    static func start(certificates: CertificateFiles?) throws -> EmbeddedServer {
        guard let executable = ExecutableLookup.sibling("bench-server") else {
            throw ServerStartError(
                description: "bench-server is not in \(ExecutableLookup.buildFolder.path) (build the Benchmarks package)"
            )
        }
        let folder = try ScratchFolder.make(prefix: "curlew-bench-server")
        var arguments = ["--threads", "1", "--max-streams", "1024", "--no-h2c"]
        var environment: [String: String] = [:]
        if let certificates {
            environment["CURLEW_TEST_SERVER_CERTIFICATES"] = certificates.folder
        } else {
            arguments.append("--no-tls")
        }
        let process = try ChildProcess.spawn(
            executable: executable, arguments: arguments, environment: environment, standardInput: .pipe,
            standardOutput: .pipe, standardError: .file(folder + "/stderr.log")
        )
        guard let ready = process.waitForLine(timeoutSeconds: 30, where: { $0.hasPrefix("READY ") }),
              let ports = ReadyLine(ready), ports.http > 0
        else {
            process.terminate(graceSeconds: 2)
            let log = (try? String(contentsOfFile: folder + "/stderr.log", encoding: .utf8)) ?? ""
            ScratchFolder.remove(folder)
            throw ServerStartError(
                description: "bench-server did not get ready: " + log.split(separator: "\n").suffix(4).joined(separator: " | ")
            )
        }
        let endpoint = ServerEndpoint(
            kind: .embedded, label: "CurlewTestServer (bench-server, 1 event-loop thread)",
            plainBase: "http://127.0.0.1:\(ports.http)",
            tlsBase: ports.tls > 0 ? "https://127.0.0.1:\(ports.tls)" : nil,
            http1TLSBase: ports.http1TLS > 0 ? "https://127.0.0.1:\(ports.http1TLS)" : nil,
            caFile: ports.tls > 0 ? certificates?.caFile : nil, layout: .embedded
        )
        return EmbeddedServer(endpoint: endpoint, process: process, folder: folder)
    }

    /// End of stdin and SIGTERM, SIGKILL after 5 s; removes the log folder.
    func stop() {
        self.process.terminate(graceSeconds: 5)
        ScratchFolder.remove(self.folder)
    }

    /// `READY http=PORT tls=PORT h2c=PORT http1tls=PORT`, parsed.
    struct ReadyLine {
        var http = 0
        var tls = 0
        var h2c = 0
        var http1TLS = 0

        /// Nil when `line` is not a READY line.
        init?(_ line: String) {
            let words = line.split(separator: " ")
            guard words.first == "READY" else { return nil }
            for word in words.dropFirst() {
                let parts = word.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let port = Int(parts[1]), (0...65_535).contains(port) else { return nil }
                switch parts[0] {
                case "http": self.http = port
                case "tls": self.tls = port
                case "h2c": self.h2c = port
                case "http1tls": self.http1TLS = port
                default: break
                }
            }
        }
    }
}
