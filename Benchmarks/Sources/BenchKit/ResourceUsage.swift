#if canImport(Glibc)
import Glibc
#endif

/// The `getrusage` figures a result reports, for the whole process or one thread.
public struct ResourceUsage: Sendable, Hashable {
    /// User CPU time, microseconds.
    public var userMicros: Int64 = 0
    /// System CPU time, microseconds.
    public var systemMicros: Int64 = 0
    /// Voluntary context switches (`ru_nvcsw`): the thread(s) blocked, i.e. went to sleep to wait.
    public var voluntaryContextSwitches: Int64 = 0
    /// Involuntary context switches (`ru_nivcsw`): preempted.
    public var involuntaryContextSwitches: Int64 = 0
    /// Peak resident set size, KiB (`ru_maxrss`; for a process, its lifetime peak).
    public var maxRSSKiB: Int64 = 0

    /// Creates a zero usage.
    public init() {}

    /// The calling process, all threads (`RUSAGE_SELF`).
    public static func process() -> ResourceUsage {
        Self.read(RUSAGE_SELF.rawValue)
    }

    /// The calling thread only (`RUSAGE_THREAD`).
    public static func currentThread() -> ResourceUsage {
        Self.read(Self.rusageThread)
    }

    /// `RUSAGE_THREAD` (Linux, `<sys/resource.h>` under `_GNU_SOURCE`, which Glibc's module does not show).
    private static let rusageThread: __rusage_who_t = 1

    private static func read(_ who: __rusage_who_t) -> ResourceUsage {
        var raw = rusage()
        guard getrusage(who, &raw) == 0 else { return ResourceUsage() }
        var usage = ResourceUsage()
        usage.userMicros = Int64(raw.ru_utime.tv_sec) * 1_000_000 + Int64(raw.ru_utime.tv_usec)
        usage.systemMicros = Int64(raw.ru_stime.tv_sec) * 1_000_000 + Int64(raw.ru_stime.tv_usec)
        usage.voluntaryContextSwitches = Int64(raw.ru_nvcsw)
        usage.involuntaryContextSwitches = Int64(raw.ru_nivcsw)
        usage.maxRSSKiB = Int64(raw.ru_maxrss)
        return usage
    }

    /// What was used between `earlier` and `self` (the counters; `maxRSSKiB` is `self`'s).
    public func since(_ earlier: ResourceUsage) -> ResourceUsage {
        var delta = ResourceUsage()
        delta.userMicros = self.userMicros - earlier.userMicros
        delta.systemMicros = self.systemMicros - earlier.systemMicros
        delta.voluntaryContextSwitches = self.voluntaryContextSwitches - earlier.voluntaryContextSwitches
        delta.involuntaryContextSwitches = self.involuntaryContextSwitches - earlier.involuntaryContextSwitches
        delta.maxRSSKiB = self.maxRSSKiB
        return delta
    }

    /// `self`'s counters minus `other`'s, never below zero (`maxRSSKiB` is `self`'s).
    public func excluding(_ other: ResourceUsage) -> ResourceUsage {
        var result = self
        result.userMicros = Swift.max(0, self.userMicros - other.userMicros)
        result.systemMicros = Swift.max(0, self.systemMicros - other.systemMicros)
        result.voluntaryContextSwitches = Swift.max(0, self.voluntaryContextSwitches - other.voluntaryContextSwitches)
        result.involuntaryContextSwitches = Swift.max(
            0, self.involuntaryContextSwitches - other.involuntaryContextSwitches)
        return result
    }
}
