#if canImport(Glibc)
import Glibc
#endif

/// The process's resident set size at a moment (``ResourceUsage`` has the peak, `ru_maxrss`).
public enum ResidentSet {
    /// The calling process's resident set size now, KiB: the second field of `/proc/self/statm` (pages)
    /// times the page size; `nil` when it cannot be read.
    public static func currentKiB() -> Int64? {
        let descriptor = open("/proc/self/statm", O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }
}
