#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch

extension TestServer {
    /// The usage text of ``runAsProcess(arguments:)``, with `name` as the program's name.
    public static func processUsage(name: String) -> String {
        """
        usage: \(name) [--port N] [--tls-port N] [--h2c-port N] [--threads N] [--max-streams N] [--no-tls] [--no-h2c] [--no-stdin]

          --port N         plain HTTP/1.1 port (default: a free one)
          --tls-port N     TLS port, ALPN h2 and http/1.1 (default: a free one)
          --h2c-port N     cleartext HTTP/2 (prior knowledge) port (default: a free one)
          --threads N      event-loop threads (default: 1)
          --max-streams N  SETTINGS_MAX_CONCURRENT_STREAMS on HTTP/2 connections (default: 100)
          --no-tls         do not start the TLS listener
          --no-h2c         do not start the h2c listener
          --no-stdin       do not stop at end of stdin (only SIGTERM/SIGINT)

        Prints "READY http=PORT tls=PORT h2c=PORT http1tls=PORT" once listening; serves until SIGTERM, SIGINT or stdin EOF.
        TLS uses the certificates in the resource bundle next to the executable, or in the directory named by
        CURLEW_TEST_SERVER_CERTIFICATES (ca.pem, server.pem, server.key).
        """
    }

    /// Runs a server as the whole process: what the `curlew-test-server` and `bench-server` executables do.
    ///
    /// Parses `arguments` (the first one is the program's path, as in `CommandLine.arguments`; see
    /// ``processUsage(name:)``), starts the listeners, prints `READY http=PORT tls=PORT h2c=PORT http1tls=PORT` (0 for a
    /// disabled listener) on stdout once every listener accepts connections (and the refused/blackhole URLs
    /// and the CA path on stderr), then serves until SIGTERM, SIGINT or end of stdin (unless `--no-stdin`:
    /// a parent that dies closes the pipe, so the server never outlives it), and exits 0. Bad arguments
    /// exit 2, a server that cannot start exits 1.
    public static func runAsProcess(arguments: [String]) -> Never {
        let name = arguments.first.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "curlew-test-server"
        let (configuration, watchStdin) = ProcessArguments.parse(Array(arguments.dropFirst()), name: name)
        raiseDescriptorLimit()

        let server: TestServer
        do {
            server = try TestServer.start(configuration)
        } catch {
            writeToStandardError("\(name): cannot start: \(error)\n")
            exit(1)
        }

        let stop = DispatchSemaphore(value: 0)
        // Signals arrive as dispatch events instead of interrupting the process.
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let signalSources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        if watchStdin {
            DispatchQueue.global().async {
                waitForEndOfStandardInput()
                stop.signal()
            }
        }

        // For people and scripts poking at it (stdout stays the single READY line).
        writeToStandardError(
            "\(name): refused=\(server.refusedURL.absoluteString) blackhole=\(server.blackholeURL.absoluteString)"
                + (configuration.enableTLS ? " ca=\(TestServer.caCertificatePath)\n" : "\n")
        )
        print("READY http=\(server.port) tls=\(server.tlsPort) h2c=\(server.h2cPort) http1tls=\(server.http1TLSBaseURL.port ?? 0)")
        fflush(nil)  // every output stream, stdout included: the parent waits for this line

        stop.wait()
        server.shutdown()
        withExtendedLifetime(signalSources) {}
        exit(0)
    }

    /// Many keep-alive connections need many descriptors: raises the soft limit to the hard one.
    private static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Blocks until stdin reaches its end (or fails).
    private static func waitForEndOfStandardInput() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(STDIN_FILENO, &buffer, buffer.count)
            if count > 0 { continue }
            if count < 0 && errno == EINTR { continue }
            return
        }
    }
}
