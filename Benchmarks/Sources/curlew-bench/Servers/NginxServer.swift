#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// nginx started by the runner: a generated configuration in a scratch folder, one master process the
/// runner spawned in a process group of its own (plus its one worker), stopped by that PID.
final class NginxServer {
    /// Where clients reach it.
    let endpoint: ServerEndpoint
    /// `nginx -v`'s version, e.g. `nginx/1.22.1`.
    let version: String
    /// The master process.
    private let process: ChildProcess
    /// The scratch folder (removed by ``stop()``).
    private let folder: String

    private init(endpoint: ServerEndpoint, version: String, process: ChildProcess, folder: String) {
        self.endpoint = endpoint
        self.version = version
        self.process = process
        self.folder = folder
    }

    /// Generates the configuration and documents, starts nginx, and returns once every port accepts.
    ///
    /// - Throws: ``ServerStartError`` with nginx's error log when it does not come up within 10 s.
    static func start(executable: String, certificates: CertificateFiles?) throws -> NginxServer {
        let folder = try ScratchFolder.make(prefix: "curlew-bench-nginx")
        do {
            let buildFlags = CommandOutput.run(executable, ["-V"]).map { $0.output + "\n" + $0.error } ?? ""
            let version = NginxServer.version(fromBuildFlags: buildFlags)
            guard let plainPort = LoopbackPort.free() else { throw ServerStartError(description: "no free port") }
            var tlsPort: Int?
            var http1TLSPort: Int?
            if certificates != nil, NginxConfiguration.supportsHTTP2OverTLS(buildFlags: buildFlags) {
                tlsPort = LoopbackPort.free()
                http1TLSPort = LoopbackPort.free()
            }
            let configuration = NginxConfiguration(
                folder: folder, plainPort: plainPort, tlsPort: tlsPort, http1TLSPort: http1TLSPort,
                certificate: certificates?.certificate ?? "", privateKey: certificates?.privateKey ?? "",
                buildFlags: buildFlags
            )
            try self.writeDocuments(into: configuration.documentRoot)
            try FileManager.default.createDirectory(atPath: folder + "/temp", withIntermediateDirectories: true)
            try configuration.text.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)

            let process = try ChildProcess.spawn(
                executable: executable, arguments: ["-p", folder + "/", "-c", folder + "/nginx.conf"],
                standardOutput: .file(folder + "/stdout.log"), standardError: .file(folder + "/stderr.log"),
                newProcessGroup: true
            )
            let ports = [plainPort] + [tlsPort, http1TLSPort].compactMap { $0 }
            let deadline = ContinuousClock.now + .seconds(10)
            while !ports.allSatisfy(LoopbackPort.accepts) {
                if process.hasExited || ContinuousClock.now >= deadline {
                    process.terminate(graceSeconds: 2)
                    throw ServerStartError(description: "nginx did not start: " + self.logTail(in: folder))
                }
                _ = process.hasExited(within: 0.05)
            }
            let endpoint = ServerEndpoint(
                kind: .nginx, label: version, plainBase: "http://127.0.0.1:\(plainPort)",
                tlsBase: tlsPort.map { "https://127.0.0.1:\($0)" },
                http1TLSBase: http1TLSPort.map { "https://127.0.0.1:\($0)" }, caFile: tlsPort == nil ? nil : certificates?.caFile,
                layout: .nginx
            )
            return NginxServer(endpoint: endpoint, version: version, process: process, folder: folder)
        } catch {
            ScratchFolder.remove(folder)
            throw error
        }
    }

    /// Fast shutdown (SIGTERM to the master, which stops its worker), SIGKILL to the process group the
    /// runner created for it after 5 s; then removes the scratch folder.
    func stop() {
        self.process.terminate(graceSeconds: 5)
        ScratchFolder.remove(self.folder)
    }

    /// `/small` (13 bytes), `/64k`, `/16m`, and the streamed bodies `/64m` and `/1g` as sparse files (zeros,
    /// no disk; sendfile serves them from the page cache), world-readable (the worker may run as nobody).
    private static func writeDocuments(into root: String) throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: root, withIntermediateDirectories: true)
        let pattern = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_\n".utf8)
        for (name, size) in [("small", 13), ("64k", 65_536), ("16m", 16_777_216)] {
            let bytes: [UInt8] = name == "small"
                ? Array("Hello, world!".utf8)
                : (0..<size).map { pattern[$0 % pattern.count] }
            try Data(bytes).write(to: URL(fileURLWithPath: root + "/" + name))
            chmod(root + "/" + name, 0o644)
        }
        for resource in [Resource.mebibytes64, .gibibyte] {
            guard let path = resource.nginxPath, let size = resource.bodyBytes else { continue }
            guard manager.createFile(atPath: root + path, contents: nil),
                  truncate(root + path, off_t(size)) == 0 else {
                throw ServerStartError(description: "cannot make the \(size)-byte file \(root + path): \(String(cString: strerror(errno)))")
            }
            chmod(root + path, 0o644)
        }
        chmod(root, 0o755)
    }

    /// The last lines of nginx's logs.
    private static func logTail(in folder: String) -> String {
        let text = ["stderr.log", "error.log"].compactMap { try? String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }
            .joined(separator: "\n")
        let lines = text.split(separator: "\n").suffix(6).joined(separator: " | ")
        return lines.isEmpty ? "(no log output)" : lines
    }

    /// `nginx/1.22.1` from `nginx -V`'s first line (`nginx version: nginx/1.22.1`).
    static func version(fromBuildFlags flags: String) -> String {
        for line in flags.split(separator: "\n") where line.hasPrefix("nginx version:") {
            return line.dropFirst("nginx version:".count).trimmingCharacters(in: .whitespaces)
        }
        return "nginx"
    }
}
