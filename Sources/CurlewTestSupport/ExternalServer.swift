import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A server program from the system — nginx, tinyproxy, microsocks — that a test runs for itself:
/// on 127.0.0.1 or on a Unix socket, from a configuration written into a temporary directory of its
/// own, with its log there too. ``start(_:arguments:configuration:listening:)`` returns once the
/// server accepts connections (found by connecting, not by waiting a while); ``stop()`` (or the
/// last reference going) kills it and removes the directory.
///
/// A program that is not installed makes the tests that need it skip, with the reason, unless the
/// environment says `CURLEW_REQUIRE_EXTERNAL_SERVERS=1` (CI does, after installing them): then the
/// test fails, saying what is missing.
///
/// ```swift
/// @Test(.enabled(if: ExternalServer.isUsable("nginx"), ExternalServer.missing("nginx")))
/// func viaUnixSocket() async throws {
///     let nginx = try ExternalServer.nginx(unixSockets: ["a"])
///     defer { nginx.stop() }
///     // … nginx.socketPath("a") …
/// }
/// ```
///
/// Every server runs under coreutils' `timeout`, so one whose test process died without stopping
/// it ends by itself after ``lifetime``. Servers are stopped with `SIGKILL`, sent to the process
/// group `timeout` makes: a program started from the test process inherits the signal mask of the
/// thread that started it, and Swift's threads block `SIGTERM` (nginx started so never quit on it).
///
/// Safety: `@unchecked Sendable` because the process and the directory are only touched by
/// ``stop()``, which holds `lock`; everything else is immutable.
public final class ExternalServer: @unchecked Sendable {
    /// The program's name, e.g. `"nginx"`.
    public let program: String
    /// The temporary directory holding the configuration, the log and any Unix socket.
    public let directory: URL
    /// The TCP port on 127.0.0.1 the server listens on, or 0 when it listens on Unix sockets only.
    public let port: Int
    private let process: Process
    private let lock = NSLock()
    private var isStopped = false

    /// The longest a server lives, whatever happens to the test process.
    public static let lifetime: Duration = .seconds(600)

    /// The directories searched for programs besides `PATH`: Debian installs daemons in `sbin`.
    private static let systemDirectories = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]

    /// Whether the environment requires every external server (`CURLEW_REQUIRE_EXTERNAL_SERVERS=1`).
    public static var isRequired: Bool {
        ProcessInfo.processInfo.environment["CURLEW_REQUIRE_EXTERNAL_SERVERS"] == "1"
    }

    /// The full path of `program`, or `nil` when it is not installed.
    public static func locate(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map(String.init) ?? []
        for directory in path + Self.systemDirectories {
            let candidate = directory + "/" + program
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Whether a test that needs `program` runs: it is installed, or the environment requires it
    /// (then a missing one fails the test instead of skipping it).
    public static func isUsable(_ program: String) -> Bool {
        Self.isRequired || Self.locate(program) != nil
    }

    /// The reason a test that needs `program` is skipped.
    public static func missing(_ program: String) -> Comment {
        Comment(rawValue: "\(program) is not installed (Scripts/ci-servers.sh installs it; CURLEW_REQUIRE_EXTERNAL_SERVERS=1 makes its absence a failure)")
    }

    /// Why a server could not be used.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the server's output when there was some.
        public var description: String
    }

    private init(program: String, directory: URL, port: Int, process: Process) {
        self.program = program
        self.directory = directory
        self.port = port
        self.process = process
    }

    deinit {
        self.stop()
    }

    // MARK: Starting

    /// Where a server listens, for the readiness check.
    public enum Endpoint: Sendable {
        /// 127.0.0.1 and this port.
        case tcp(Int)
        /// A Unix socket at this path.
        case unix(String)
    }

    /// Starts `program` with `arguments`, after writing `configuration` (file name → text, the
    /// text's `$DIR` replaced by the server's directory and `$PORT` by ``port``) into a new
    /// temporary directory, and returns once every endpoint accepts a connection.
    ///
    /// - Parameters:
    ///   - program: The program's name, looked up as ``locate(_:)`` does.
    ///   - arguments: Its arguments; `$DIR` and `$PORT` are replaced as in the configuration.
    ///   - configuration: Files to write first.
    ///   - listening: Where it listens (`$DIR` replaced); a `.tcp` endpoint's port is ignored: the
    ///     server gets a free one as `$PORT`.
    ///   - output: The file in the directory that receives the program's standard output and error.
    /// - Throws: ``Failure`` when the program is missing, exits, or does not accept connections
    ///   within 30 seconds.
    public static func start(
        _ program: String, arguments: [String], configuration: [String: String] = [:],
        listening: [Endpoint], output: String = "output.log"
    ) throws -> ExternalServer {
        guard let path = Self.locate(program) else {
            throw Failure(description: "\(program) is not installed")
        }
        // Another process may take the free port between the check and the server's bind: try again.
        var lastFailure = Failure(description: "\(program) did not start")
        for _ in 0..<3 {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("curlew-\(program)-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let port = try Self.freePort()
            func expand(_ text: String) -> String {
                text.replacingOccurrences(of: "$DIR", with: directory.path).replacingOccurrences(of: "$PORT", with: String(port))
            }
            for (name, text) in configuration {
                try expand(text).write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.locate("timeout") ?? "/usr/bin/timeout")
            process.arguments = ["--signal=KILL", String(Self.lifetime.components.seconds), path] + arguments.map(expand)
            process.currentDirectoryURL = directory
            let log = directory.appendingPathComponent(output)
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            process.standardOutput = handle
            process.standardError = handle
            process.standardInput = FileHandle.nullDevice
            // A server is not under test: it must not inherit a sanitizer the tests run under
            // (microsocks crashed with Scripts/leaks.sh's preloaded LeakSanitizer).
            var environment = ProcessInfo.processInfo.environment
            for name in ["LD_PRELOAD", "LSAN_OPTIONS", "ASAN_OPTIONS", "TSAN_OPTIONS"] { environment[name] = nil }
            process.environment = environment
            try process.run()
            try? handle.close()
            let server = ExternalServer(program: program, directory: directory, port: port, process: process)
            let endpoints = listening.map { endpoint -> Endpoint in
                switch endpoint {
                case .tcp: .tcp(port)
                case .unix(let socket): .unix(expand(socket))
                }
            }
            do {
                try server.waitUntilAccepting(endpoints)
                return server
            } catch let failure as Failure {
                server.stop()
                lastFailure = failure
            }
        }
        throw lastFailure
    }

    /// Connects to each endpoint until it accepts, failing if the process exits or 30 s pass.
    private func waitUntilAccepting(_ endpoints: [Endpoint]) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        for endpoint in endpoints {
            while !Self.accepts(endpoint) {
                guard self.process.isRunning else {
                    throw Failure(description: "\(self.program) exited (status \(self.process.terminationStatus)): \(self.output())")
                }
                guard ContinuousClock.now < deadline else {
                    throw Failure(description: "\(self.program) did not accept connections at \(endpoint) within 30 s: \(self.output())")
                }
                usleep(2_000)
            }
        }
    }

    /// Whether a connection to `endpoint` succeeds now.
    private static func accepts(_ endpoint: Endpoint) -> Bool {
        switch endpoint {
        case .tcp(let port):
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { return false }
            defer { close(socket) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
        case .unix(let path):
            let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { return false }
            defer { close(socket) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                buffer.copyBytes(from: bytes)
            }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
                }
            }
        }
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's choice).
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "could not bind 127.0.0.1:0: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: Using

    /// The text of a file in the server's directory (its log), or `""`.
    public func file(_ name: String) -> String {
        (try? String(contentsOf: self.directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    /// What the program wrote to its standard output and error.
    public func output(_ name: String = "output.log") -> String {
        self.file(name)
    }

    /// Kills the server (`SIGKILL` to the process group of `timeout` and the program), waits for it,
    /// and removes its directory. Idempotent.
    public func stop() {
        self.lock.lock()
        defer { self.lock.unlock() }
        guard !self.isStopped else { return }
        self.isStopped = true
        if self.process.isRunning {
            kill(-self.process.processIdentifier, SIGKILL)
            self.process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: self.directory)
    }
}
