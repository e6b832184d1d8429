import Foundation
internal import CoreFoundation
internal import Glibc
internal import CCurlewLinux
import Synchronization

/// A dedicated, lazily started thread whose run loop runs forever: the context of the run-loop
/// backend, like AFNetworking's `+networkRequestThread`.
///
/// The thread is created on first use (``start()``, ``perform(inModes:_:)``, or a scheduler's
/// first ``RunLoopScheduler/perform(_:)``), exactly once, and is named so it shows up in debuggers
/// and `/proc/self/task/*/comm` (Linux keeps the first 15 bytes of a thread name). It then runs
/// `CFRunLoopRunInMode(runMode, 1.0e10, false)` in a loop, forever. It does not use
/// `RunLoop.run(mode:before:)`, which returns after every source and costs O(sources) per return.
///
/// ## Keep-alive
///
/// A run loop with no input source returns at once, so something must be in the run mode. The
/// seeds added an `NSMachPort`; here the thread adds a version-1 `CFRunLoopSource` whose port
/// (`CFRunLoopSourceContext1.getPort`, an `Int32` descriptor on Linux) is an `eventfd` that is never
/// written. It is not a socket, so nothing listens on the network (`SocketPort()` would listen on
/// TCP 0.0.0.0), and it starts no CF helper thread. An idle loop sleeps in `ppoll`; ``wakeUpCount``
/// shows it.
///
/// ## Waking the loop
///
/// `CFRunLoopPerformBlock` only queues a block; on Linux it does not wake a sleeping loop, so
/// ``perform(inModes:_:)`` always follows it with `CFRunLoopWakeUp`.
///
/// ```swift
/// let thread = NetworkThread.shared          // created, not started
/// thread.perform(inModes: [.common]) {       // starts the thread, then runs on it
///     assert(thread.isCurrent)
/// }
/// ```
///
/// A started thread keeps a strong reference to its `NetworkThread` and lives for the rest of the
/// process.
///
/// `@unchecked Sendable`: the only mutable state (`state`) is guarded by `lock`; the wake-up
/// counter is an `Atomic`; everything else is immutable.
public final class NetworkThread: @unchecked Sendable {
    /// The name of ``shared``'s thread.
    public static let defaultName = "Curlew.network"

    /// The process-wide network thread, created on first access and started on first use.
    public static let shared = NetworkThread()

    /// The thread's name as given (the kernel sees at most its first 15 bytes).
    public let name: String

    /// The mode the thread runs its run loop in. Work, sources and timers added only in other modes
    /// are never served by this thread.
    public let runMode: RunLoop.Mode

    private let runModeName: CFString
    private let lock = NSCondition()
    private var state: State = .idle  // guarded by `lock`
    private let wakeUps = Atomic<Int>(0)

    private enum State {
        case idle
        case starting
        case running(Running)
    }

    /// What the thread publishes once its loop can accept work.
    struct Running {
        let runLoop: CFRunLoop
        let pthread: pthread_t
        let threadID: Int32
        /// The keep-alive source's eventfd (`nil` if the fallback timer keeps the loop alive).
        let keepAliveDescriptor: Int32?
    }

    /// Creates a network thread without starting it.
    ///
    /// - Parameters:
    ///   - name: The thread's name, for debuggers and `/proc/self/task/*/comm` (truncated to
    ///     15 bytes there).
    ///   - runMode: The mode the thread runs its run loop in. Only work, sources and timers added
    ///     in this mode (directly or through the common modes, when it is one of them) are served.
    public init(name: String = NetworkThread.defaultName, runMode: RunLoop.Mode = .default) {
        self.name = name
        self.runMode = runMode
        self.runModeName = RunLoopModeList.cfName(runMode)
    }

    /// Whether the thread has been started and its run loop accepts work.
    public var isStarted: Bool {
        self.runningIfStarted() != nil
    }

    /// The Linux thread id (`gettid()`) of the thread, or `nil` before it starts.
    public var threadID: Int32? {
        self.runningIfStarted()?.threadID
    }

    /// Whether the caller is running on this thread.
    public var isCurrent: Bool {
        guard let running = self.runningIfStarted() else { return false }
        return pthread_equal(running.pthread, pthread_self()) != 0
    }

    /// How many times the run loop woke up after sleeping (counted by a `kCFRunLoopAfterWaiting`
    /// observer in ``runMode``). An idle loop does not wake, so this stays still.
    public var wakeUpCount: Int {
        self.wakeUps.load(ordering: .relaxed)
    }

    /// Starts the thread if it has not started yet, and returns once its run loop accepts work.
    ///
    /// Safe to call from any thread, any number of times; only the first call creates the thread.
    public func start() {
        _ = self.running()
    }

    /// Runs `block` on this thread's run loop, asynchronously, when the loop runs in one of `modes`.
    ///
    /// Queues the block with `CFRunLoopPerformBlock` and wakes the loop with `CFRunLoopWakeUp`
    /// (queuing alone does not wake a sleeping loop on Linux). Blocks run in submission order among
    /// those whose modes match. Starts the thread if needed.
    ///
    /// - Parameters:
    ///   - modes: The modes the block may run in; `.common` means the loop's common modes. A block
    ///     whose modes exclude ``runMode`` waits until the loop runs in one of them (here: never).
    ///   - block: The work to run on this thread.
    public func perform(inModes modes: [RunLoop.Mode] = [.common], _ block: @escaping @Sendable () -> Void) {
        self.perform(RunLoopModeList(modes).performArgument, block)
    }

    /// ``perform(inModes:_:)`` with a prebuilt CF mode argument (the schedulers' hot path).
    func perform(_ modeArgument: CFTypeRef, _ block: @escaping @Sendable () -> Void) {
        let loop = self.running().runLoop
        CFRunLoopPerformBlock(loop, modeArgument, block)
        CFRunLoopWakeUp(loop)
    }

    /// The started thread's run loop and identity, starting the thread first if needed.
    func running() -> Running {
        self.lock.lock()
        defer { self.lock.unlock() }
        while true {
            switch self.state {
            case .running(let running):
                return running
            case .idle:
                self.state = .starting
                let thread = Thread { [self] in self.threadMain() }
                thread.name = self.name
                thread.start()
            case .starting:
                self.lock.wait()
            }
        }
    }

    private func runningIfStarted() -> Running? {
        self.lock.lock()
        defer { self.lock.unlock() }
        if case .running(let running) = self.state { return running }
        return nil
    }

    private func threadMain() {
        let osName = Self.kernelThreadName(self.name)
        _ = ccurlew_set_current_thread_name(osName)

        let loop: CFRunLoop = CFRunLoopGetCurrent()
        var keepAliveDescriptor: Int32?
        if let keepAlive = KeepAlivePort.make() {
            CFRunLoopAddSource(loop, keepAlive.source, self.runModeName)
            keepAliveDescriptor = keepAlive.descriptor
        } else {
            // Out of descriptors: a timer that never fires keeps the mode non-empty just as well.
            let idle = CFRunLoopTimerCreate(kCFAllocatorDefault, 4.0e9, 0, 0, 0, { _, _ in }, nil)
            CFRunLoopAddTimer(loop, idle, self.runModeName)
        }
        self.addWakeUpObserver(to: loop)

        self.lock.lock()
        self.state = .running(Running(
            runLoop: loop, pthread: pthread_self(), threadID: ccurlew_gettid(),
            keepAliveDescriptor: keepAliveDescriptor))
        self.lock.broadcast()
        self.lock.unlock()

        while true {
            _ = CFRunLoopRunInMode(self.runModeName, 1.0e10, false)
        }
    }

    private func addWakeUpObserver(to loop: CFRunLoop) {
        var context = CFRunLoopObserverContext()
        // Unretained: the thread's closure holds `self` for as long as the loop runs, i.e. forever.
        context.info = Unmanaged.passUnretained(self).toOpaque()
        let observer = CFRunLoopObserverCreate(
            kCFAllocatorDefault, CFRunLoopActivity.afterWaiting.rawValue, true, 0,
            { _, _, info in
                guard let info else { return }
                Unmanaged<NetworkThread>.fromOpaque(info).takeUnretainedValue()
                    .wakeUps.add(1, ordering: .relaxed)
            },
            &context
        )
        if let observer { CFRunLoopAddObserver(loop, observer, self.runModeName) }
    }

    /// `name` cut to the 15 bytes Linux keeps, at a character boundary.
    static func kernelThreadName(_ name: String) -> String {
        var result = ""
        var bytes = 0
        for character in name {
            let size = character.utf8.count
            if bytes + size > 15 { break }
            bytes += size
            result.append(character)
        }
        return result
    }
}
