#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a running process's thread count and peak RSS from `/proc`, the way the clients count their own
/// threads (for wrk, which reports neither).
enum ProcessSampler {
    /// The number of threads of `pid` right now: the entries of `/proc/PID/task` (0 when it is gone).
    static func threads(of pid: pid_t) -> Int {
        guard let directory = opendir("/proc/\(pid)/task") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name.first == UInt8(ascii: ".")
            }
            if !isDot { count += 1 }
        }
        return count
    }

    /// The peak resident set size of `pid`'s address space so far (`VmHWM` in `/proc/PID/status`), KiB;
    /// 0 when it is gone or the line is missing.
    static func peakRSSKiB(of pid: pid_t) -> Int64 {
        guard let file = fopen("/proc/\(pid)/status", "r") else { return 0 }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 512)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard line.hasPrefix("VmHWM:") else { continue }
            let digits = line.dropFirst("VmHWM:".count).filter { $0.isNumber }
            return Int64(digits) ?? 0
        }
        return 0
    }
}
