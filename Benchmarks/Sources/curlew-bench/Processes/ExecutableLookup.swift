#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Where the runner finds programs: its siblings in the build folder, and tools on `PATH`.
enum ExecutableLookup {
    /// The folder holding the runner's own executable: every product of the Benchmarks package is built
    /// there (the clients, `bench-server`, and the test server's resource bundle).
    static var buildFolder: URL {
        if let executable = Bundle.main.executableURL {
            return executable.resolvingSymlinksInPath().deletingLastPathComponent()
        }
        let argument = CommandLine.arguments.first ?? "."
        return URL(fileURLWithPath: argument).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The path of product `name` beside the runner, if it exists and is executable.
    static func sibling(_ name: String) -> String? {
        let path = self.buildFolder.appendingPathComponent(name).path
        return access(path, X_OK) == 0 ? path : nil
    }

    /// The first executable `name` on `PATH`, then in the sbin folders (nginx lives in `/usr/sbin`, which
    /// is not on every user's `PATH`).
    static func tool(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let folders = path.split(separator: ":").map(String.init) + ["/usr/local/sbin", "/usr/sbin", "/sbin"]
        for folder in folders where !folder.isEmpty {
            let candidate = folder + "/" + name
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }
}
