// curlew-test-server: the CurlewTestServer routes as a process of their own, for the benchmark runner
// (when nginx is missing) and for poking at the routes with curl.
//
//   curlew-test-server [--port N] [--tls-port N] [--h2c-port N] [--threads N] [--no-tls] [--no-h2c] [--no-stdin]
//
// Prints `READY http=PORT tls=PORT h2c=PORT` (0 for a disabled listener) on stdout once every listener
// accepts connections (and the refused/blackhole URLs and the CA path on stderr), then serves until
// SIGTERM, SIGINT or end of stdin (unless --no-stdin), and exits 0.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CurlewTestServer
import Dispatch

let usage = """
    usage: curlew-test-server [--port N] [--tls-port N] [--h2c-port N] [--threads N] [--no-tls] [--no-h2c] [--no-stdin]

      --port N      plain HTTP/1.1 port (default: a free one)
      --tls-port N  TLS port, ALPN h2 and http/1.1 (default: a free one)
      --h2c-port N  cleartext HTTP/2 (prior knowledge) port (default: a free one)
      --threads N   event-loop threads (default: 1)
      --no-tls      do not start the TLS listener
      --no-h2c      do not start the h2c listener
      --no-stdin    do not stop at end of stdin (only SIGTERM/SIGINT)

    Prints "READY http=PORT tls=PORT h2c=PORT" once listening; serves until SIGTERM, SIGINT or stdin EOF.
    TLS uses the certificates in the resource bundle next to the executable, or in the directory named by
    CURLEW_TEST_SERVER_CERTIFICATES (ca.pem, server.pem, server.key).
    """

func fail(_ message: String, code: Int32) -> Never {
    let line = Array("curlew-test-server: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(code)
}

func parseArguments(_ arguments: [String]) -> (TestServer.Configuration, watchStdin: Bool) {
    var configuration = TestServer.Configuration()
    var watchStdin = true
    var index = 0

    func value(for option: String, in range: ClosedRange<Int>) -> Int {
        index += 1
        guard index < arguments.count, let number = Int(arguments[index]), range.contains(number) else {
            fail("\(option) needs a number in \(range.lowerBound)...\(range.upperBound)\n\(usage)", code: 2)
        }
        return number
    }

    while index < arguments.count {
        switch arguments[index] {
        case "--port": configuration.port = value(for: "--port", in: 0...65_535)
        case "--tls-port": configuration.tlsPort = value(for: "--tls-port", in: 0...65_535)
        case "--h2c-port": configuration.h2cPort = value(for: "--h2c-port", in: 0...65_535)
        case "--threads": configuration.eventLoopThreads = value(for: "--threads", in: 1...256)
        case "--no-tls": configuration.enableTLS = false
        case "--no-h2c": configuration.enableH2C = false
        case "--no-stdin": watchStdin = false
        case "--help", "-h":
            print(usage)
            exit(0)
        default:
            fail("unknown argument '\(arguments[index])'\n\(usage)", code: 2)
        }
        index += 1
    }
    return (configuration, watchStdin)
}

/// Many keep-alive connections need many descriptors: raise the soft limit to the hard one.
func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

let (configuration, watchStdin) = parseArguments(Array(CommandLine.arguments.dropFirst()))
raiseDescriptorLimit()

let server: TestServer
do {
    server = try TestServer.start(configuration)
} catch {
    fail("cannot start: \(error)", code: 1)
}

let stop = DispatchSemaphore(value: 0)

// Signals arrive as dispatch events instead of interrupting the process.
signal(SIGTERM, SIG_IGN)
signal(SIGINT, SIG_IGN)
let signalSources = [SIGTERM, SIGINT].map { number in
    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
    // `@Sendable`: otherwise the closure would inherit the main actor from top-level code, and Swift 6
    // would trap when GCD runs it on another thread.
    source.setEventHandler { @Sendable in stop.signal() }
    source.resume()
    return source
}

if watchStdin {
    // A parent that dies closes our stdin, so the server never outlives the benchmark runner.
    DispatchQueue.global().async { @Sendable in
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(STDIN_FILENO, &buffer, buffer.count)
            if count > 0 { continue }
            if count < 0 && errno == EINTR { continue }
            break
        }
        stop.signal()
    }
}

// For people and scripts poking at it (stdout stays the single READY line).
let details = "curlew-test-server: refused=\(server.refusedURL.absoluteString) "
    + "blackhole=\(server.blackholeURL.absoluteString)"
    + (configuration.enableTLS ? " ca=\(TestServer.caCertificatePath)\n" : "\n")
_ = Array(details.utf8).withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }

print("READY http=\(server.port) tls=\(server.tlsPort) h2c=\(server.h2cPort)")
fflush(nil)  // every output stream, stdout included: the runner waits for this line

stop.wait()
server.shutdown()
withExtendedLifetime(signalSources) {}
exit(0)
