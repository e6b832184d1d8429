#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The runner's two output streams: results go to stdout, everything about progress to stderr.
enum Console {
    /// Whether stderr is a terminal (then progress is drawn as a bar that rewrites its line).
    static let standardErrorIsTerminal: Bool = isatty(STDERR_FILENO) == 1

    /// Writes `text` to stderr as is, unbuffered.
    static func writeError(_ text: String) {
        writeAll(text, to: STDERR_FILENO)
    }

    /// Writes `text` and a newline to stderr.
    static func log(_ text: String) {
        writeError(text + "\n")
    }

    /// Writes `text` to stdout as is, unbuffered (so it never interleaves oddly with stderr).
    static func writeOutput(_ text: String) {
        writeAll(text, to: STDOUT_FILENO)
    }

    private static func writeAll(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
