#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Fresh private folders under the system's temporary folder, remembered so that an interrupted runner
/// can still remove them.
///
/// `@unchecked Sendable`: `paths` is only touched with `lock` (an `NSLock`) held; the interrupt handler
/// reads it on a dispatch queue.
final class ScratchFolder: @unchecked Sendable {
    private static let registry = ScratchFolder()
    private let lock = NSLock()
    private var paths: Set<String> = []

    /// Creates `TMPDIR/<prefix>.XXXXXX` and makes it world-readable (an nginx worker running as nobody
    /// reads documents in it); returns its path.
    static func make(prefix: String) throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/" + prefix + ".XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return mkdtemp(base) != nil
        }
        guard made else {
            throw ServerStartError(description: "cannot create a folder in \(base): \(String(cString: strerror(errno)))")
        }
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(path, 0o755)
        self.registry.lock.withLock { _ = self.registry.paths.insert(path) }
        return path
    }

    /// Removes a folder made by ``make(prefix:)`` and everything in it.
    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
        self.registry.lock.withLock { _ = self.registry.paths.remove(path) }
    }

    /// Removes every folder made and not yet removed (on the way out of an interrupted run).
    static func removeAll() {
        let paths = self.registry.lock.withLock { self.registry.paths }
        for path in paths { self.remove(path) }
    }
}
