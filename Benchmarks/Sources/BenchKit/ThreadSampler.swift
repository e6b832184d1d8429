import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Counts the process's threads every 10 ms from a thread of its own and keeps the peak.
///
/// The count is the entries of `/proc/self/task` **minus one: the sampler's own thread is not
/// counted**, since it exists only to measure. Its CPU time and context switches are not the
/// client's either: it keeps its own `RUSAGE_THREAD` figures (``ownUsage``), which the closed loop
/// subtracts from the process's, so an idle client's wake-ups are not the sampler's 100 a second.
///
/// `@unchecked Sendable`: every mutable property (`peak`, `latestOwnUsage`, `isRunning`,
/// `isStopped`, `samplerThreadAlive`) is guarded by `lock`.
public final class ThreadSampler: @unchecked Sendable {
    /// The sampling period, nanoseconds (10 ms).
    public static let periodNanoseconds = 10_000_000

    private let lock = NSLock()
    private var peak = 0
    private var latestOwnUsage = ResourceUsage()
    private var isRunning = false
    private var isStopped = false
    private var samplerThreadAlive = false

    /// Creates a sampler; ``start()`` starts it.
    public init() {}

    /// Starts the sampling thread (once).
    public func start() {
        self.lock.lock()
        let alreadyRunning = self.isRunning
        self.isRunning = true
        self.lock.unlock()
        guard !alreadyRunning else { return }
        self.sampleNow()
        let thread = Thread { [self] in self.run() }
        thread.name = "bench.sampler"
        thread.start()
    }

    /// Counts once now, on the calling thread (so that a run shorter than the period has a figure).
    public func sampleNow() {
        let count = Self.countThreads()
        self.lock.lock()
        let own = self.samplerThreadAlive ? 1 : 0
        if count - own > self.peak { self.peak = count - own }
        self.lock.unlock()
    }

    /// Stops sampling; the peak stays readable.
    public func stop() {
        self.lock.lock()
        self.isStopped = true
        self.lock.unlock()
    }

    /// The most threads seen so far, not counting the sampler.
    public var peakThreads: Int {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.peak
    }

    /// The sampler thread's own CPU time and context switches, as of its latest sample.
    public var ownUsage: ResourceUsage {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.latestOwnUsage
    }

    private func run() {
        var pause = timespec(tv_sec: 0, tv_nsec: Self.periodNanoseconds)
        self.lock.lock()
        self.samplerThreadAlive = true
        self.lock.unlock()
        while true {
            // Minus one: this sampler thread.
            let count = Self.countThreads() - 1
            let ownUsage = ResourceUsage.currentThread()
            self.lock.lock()
            if count > self.peak { self.peak = count }
            self.latestOwnUsage = ownUsage
            let stopped = self.isStopped
            if stopped { self.samplerThreadAlive = false }
            self.lock.unlock()
            if stopped { return }
            nanosleep(&pause, nil)
        }
    }

    /// Entries of `/proc/self/task`, one per thread of the process.
    static func countThreads() -> Int {
        guard let directory = opendir("/proc/self/task") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0.first ?? 0 }
            if first != UInt8(ascii: ".") { count += 1 }
        }
        return count
    }
}
