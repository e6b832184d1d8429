internal import CCurlewLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Read-only looks at the test process through Linux's `/proc/self`: descriptors, threads and
/// per-thread CPU time, for leak checks ("every descriptor closed", "no thread added") and for
/// "idle costs no CPU" checks.
///
/// All of it is a snapshot that other threads of the process (other tests, libdispatch's pool) may
/// change a moment later: compare counts with the same snapshot taken before, and prefer checking a
/// specific descriptor or thread over a process-wide total.
public enum ProcessInspector {
    // MARK: Descriptors

    /// How many file descriptors the process has open (not counting the one used to list them).
    public static func openDescriptorCount() -> Int {
        self.openDescriptors().count
    }

    /// The process's open file descriptors, ascending (not counting the one used to list them).
    public static func openDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let listingDescriptor = dirfd(directory)
        var descriptors: [Int32] = []
        for name in Self.entryNames(of: directory) {
            if let descriptor = Int32(name), descriptor != listingDescriptor {
                descriptors.append(descriptor)
            }
        }
        return descriptors.sorted()
    }

    /// Whether `descriptor` is open in this process (`fcntl(F_GETFD)` does not fail with `EBADF`).
    public static func isOpen(_ descriptor: Int32) -> Bool {
        fcntl(descriptor, F_GETFD) != -1 || errno != EBADF
    }

    /// The soft limit on open descriptors (`RLIMIT_NOFILE`); descriptor numbers stay below it.
    public static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return limit.rlim_cur >= UInt(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    // MARK: Threads

    /// One thread of the process.
    public struct ThreadInfo: Sendable, Hashable {
        /// The kernel thread id (the `TID` in `/proc/self/task/TID`).
        public var id: Int32
        /// The thread's name as the kernel keeps it (`comm`: at most 15 bytes, so often truncated).
        public var name: String
    }

    /// The process's threads with their names.
    public static func threads() -> [ThreadInfo] {
        Self.threadIDs().compactMap { id in
            guard let name = self.threadName(id) else { return nil }  // it exited meanwhile
            return ThreadInfo(id: id, name: name)
        }
    }

    /// The names of the process's threads (`/proc/self/task/*/comm`).
    public static func threadNames() -> [String] {
        self.threads().map(\.name)
    }

    /// How many threads the process has.
    public static func threadCount() -> Int {
        self.threadIDs().count
    }

    /// The kernel thread id of the calling thread (read from `/proc/thread-self`).
    public static func currentThreadID() -> Int32? {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        // The link reads "PID/task/TID".
        let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.split(separator: "/").last.flatMap { Int32($0) }
    }

    /// The name of thread `id`, or `nil` if it does not exist (any more).
    public static func threadName(_ id: Int32) -> String? {
        guard let contents = self.readProcFile("/proc/self/task/\(id)/comm") else { return nil }
        return contents.hasSuffix("\n") ? String(contents.dropLast()) : contents
    }

    /// CPU time (user + system) thread `id` has used so far, or `nil` if it does not exist (any
    /// more). The kernel counts in clock ticks (`sysconf(_SC_CLK_TCK)`, usually 10 ms each), so use
    /// it for coarse comparisons such as "an idle thread stays near zero".
    public static func cpuTime(ofThread id: Int32) -> Duration? {
        guard let stat = self.readProcFile("/proc/self/task/\(id)/stat") else { return nil }
        // The name field is "(comm)" and may itself contain spaces and parentheses: the fields that
        // follow start after the last ")". After it: state is field 3, utime 14, stime 15.
        guard let closing = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: closing)...].split(separator: " ")
        guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
        let ticksPerSecond = Int64(sysconf(Int32(_SC_CLK_TCK)))
        guard ticksPerSecond > 0 else { return nil }
        let ticks = user + system
        return .seconds(ticks / ticksPerSecond) + .nanoseconds((ticks % ticksPerSecond) * 1_000_000_000 / ticksPerSecond)
    }

    /// CPU time (user + system) the whole process has used so far, all threads (`getrusage`).
    public static func processCPUTime() -> Duration {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return .zero }
        func duration(_ time: timeval) -> Duration {
            .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec))
        }
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }

    // MARK: Memory

    /// The process's resident set size now and its peak (`VmRSS`, `VmHWM` of `/proc/self/status`),
    /// in bytes; `nil` when they cannot be read.
    public static func residentMemory() -> (current: Int64, peak: Int64)? {
        guard let status = Self.readProcFile("/proc/self/status") else { return nil }
        func kilobytes(_ field: String) -> Int64? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return nil }
            return line.split(separator: " ").dropFirst().first.flatMap { Int64($0) }
        }
        guard let current = kilobytes("VmRSS"), let peak = kilobytes("VmHWM") else { return nil }
        return (current * 1024, peak * 1024)
    }

    /// Resets the peak resident set size (`VmHWM`) to the current one, by writing `5` to
    /// `/proc/self/clear_refs` (Linux 4.0 and later); `false` when that is not allowed.
    public static func resetPeakResidentMemory() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { _ = close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// Hands the heap's free pages back to the kernel (glibc's `malloc_trim(0)`), so that the
    /// resident size then counts live memory rather than memory freed but kept by the allocator's
    /// arenas; `false` when nothing could be released.
    @discardableResult
    public static func releaseFreeHeapPages() -> Bool {
        malloc_trim(0) == 1
    }

    /// The bytes the process's code holds allocated from `malloc` right now, in every arena and in
    /// separately mapped blocks (glibc's `mallinfo2`: `uordblks + hblkhd`): live memory, whatever the
    /// allocator keeps around it.
    public static func heapInUse() -> Int64 {
        let info = mallinfo2()
        return Int64(clamping: info.uordblks) + Int64(clamping: info.hblkhd)
    }

    // MARK: Helpers

    private static func threadIDs() -> [Int32] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        return Self.entryNames(of: directory).compactMap { Int32($0) }.sorted()
    }

    private static func entryNames(of directory: OpaquePointer) -> [String] {
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The whole contents of a `/proc` file (or any file), read to the end.
    ///
    /// `String(contentsOfFile:)` is no good for `/proc`: such files report a size of 0, and
    /// Foundation then returns only the first page (4 KiB of `/proc/net/tcp`, which lists every TCP
    /// socket on the machine and easily runs to hundreds of KiB while tests churn connections).
    public static func readProcFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: chunk[..<count])
            } else if count == 0 {
                return String(decoding: bytes, as: UTF8.self)
            } else if errno != EINTR {
                return nil
            }
        }
    }
}
