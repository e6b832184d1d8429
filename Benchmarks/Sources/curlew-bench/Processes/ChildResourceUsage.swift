#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the kernel accounted to one child process over its whole life (`wait4`'s `rusage`), as the
/// runner saw it: start-up and warm-up included, unlike the client's own figures for its measured phase.
struct ChildResourceUsage: Codable, Sendable, Hashable {
    /// User CPU time, microseconds.
    var userMicros: Int64
    /// System CPU time, microseconds.
    var systemMicros: Int64
    /// Peak resident set size, KiB, from `/proc/PID/status` (`VmHWM`) sampled while the process ran; 0 when
    /// not sampled. Not `ru_maxrss`: a child's `ru_maxrss` starts at its parent's peak (the kernel carries
    /// the old address space's high-water mark across `exec`), so the runner's own size would leak in.
    var maxRSSKiB: Int64
    /// Voluntary context switches (the process blocked: each is a sleep and a wake-up).
    var voluntaryContextSwitches: Int64
    /// Involuntary context switches (the process was preempted).
    var involuntaryContextSwitches: Int64

    /// Nothing accounted (a process that could not be waited for).
    static let zero = ChildResourceUsage(
        userMicros: 0, systemMicros: 0, maxRSSKiB: 0, voluntaryContextSwitches: 0, involuntaryContextSwitches: 0
    )

    /// Copies the CPU times and context switches of a kernel `rusage`; the peak RSS is given.
    init(_ usage: rusage, peakRSSKiB: Int64) {
        self.userMicros = Int64(usage.ru_utime.tv_sec) * 1_000_000 + Int64(usage.ru_utime.tv_usec)
        self.systemMicros = Int64(usage.ru_stime.tv_sec) * 1_000_000 + Int64(usage.ru_stime.tv_usec)
        self.maxRSSKiB = peakRSSKiB
        self.voluntaryContextSwitches = Int64(usage.ru_nvcsw)
        self.involuntaryContextSwitches = Int64(usage.ru_nivcsw)
    }

    /// Memberwise.
    init(
        userMicros: Int64, systemMicros: Int64, maxRSSKiB: Int64,
        voluntaryContextSwitches: Int64, involuntaryContextSwitches: Int64
    ) {
        self.userMicros = userMicros
        self.systemMicros = systemMicros
        self.maxRSSKiB = maxRSSKiB
        self.voluntaryContextSwitches = voluntaryContextSwitches
        self.involuntaryContextSwitches = involuntaryContextSwitches
    }
}
