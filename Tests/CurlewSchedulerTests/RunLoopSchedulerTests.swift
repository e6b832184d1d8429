import CoreFoundation
import CurlewTestSupport
import CurlewTransport
import Dispatch
import Foundation
import Testing

@testable import CurlewRunLoop

#if canImport(Glibc)
import Glibc
#endif

// Run-loop specific behaviour of `RunLoopScheduler` and `NetworkThread`: the thread (lazy, once,
// named, shared), the keep-alive, run-loop modes, and each socket strategy's pitfalls. What every
// scheduler must do (level-triggered readiness, interest changed inside an event, stale events of a
// reused descriptor number included) is in `SchedulerConformanceTests`.
//
// Most tests make a `NetworkThread` of their own, so what they observe is theirs even while other
// suites use `.shared` in parallel. Those threads live for the rest of the process.

@Suite("RunLoopScheduler and NetworkThread", .serialized)
struct RunLoopSchedulerTests {
    // MARK: The thread

    @Test("A network thread starts on first use, exactly once, under its name")
    func threadStartsLazilyOnceAndNamed() async throws {
        let name = "curlew.t.lazy"
        let thread = NetworkThread(name: name)
        let scheduler = RunLoopScheduler(thread: thread)
        #expect(!thread.isStarted, "creating a scheduler is not a use")
        #expect(thread.threadID == nil)
        #expect(!scheduler.isOnContext)
        let namedBefore = Set(ProcessInspector.threads().filter { $0.name == name }.map(\.id))

        // Eight first uses at once: one thread, started once, runs all eight blocks.
        let ranOn = Locked<[Int32]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            scheduler.perform {
                ranOn.withLock { $0.append(ProcessInspector.currentThreadID() ?? -1) }
            }
        }
        #expect(await waitUntil { ranOn.value.count == 8 })
        #expect(thread.isStarted)
        let threadID = try #require(thread.threadID)
        #expect(ranOn.value.count == 8)
        #expect(Set(ranOn.value) == [threadID])
        let namedAfter = Set(ProcessInspector.threads().filter { $0.name == name }.map(\.id))
        #expect(namedAfter.subtracting(namedBefore) == [threadID], "one new thread, under the name")
    }

    @Test("The kernel keeps the first 15 bytes of the name, cut at a character boundary")
    func longNamesAreTruncatedForTheKernel() async throws {
        let thread = NetworkThread(name: "curlew.t.a-name-longer-than-15-bytes")
        thread.start()
        let threadID = try #require(thread.threadID)
        #expect(ProcessInspector.threadName(threadID) == "curlew.t.a-name")
        #expect(thread.name == "curlew.t.a-name-longer-than-15-bytes")
        #expect(NetworkThread.kernelThreadName("ééééééééé") == "ééééééé")  // 14 of 18 bytes
    }

    @Test("Schedulers made with the defaults share NetworkThread.shared")
    func defaultSchedulersShareTheSharedThread() async throws {
        let epoll = RunLoopScheduler()
        let cfSocket = RunLoopScheduler(sockets: .cfSocket)
        #expect(epoll.thread === NetworkThread.shared)
        #expect(cfSocket.thread === NetworkThread.shared)
        #expect(NetworkThread.shared.name == "Curlew.network")

        let first = try #require(await epoll.runOnContext { ProcessInspector.currentThreadID() ?? -1 })
        let second = try #require(await cfSocket.runOnContext { ProcessInspector.currentThreadID() ?? -1 })
        #expect(first == second)
        #expect(first == NetworkThread.shared.threadID)
        #expect(ProcessInspector.threadName(first) == "Curlew.network")
        // "Exactly one" is checked in the isolated process: here, CF's socket thread may carry the
        // same name (it inherits its creator's; see `IsolatedCheck`).
    }

    @Test("The keep-alive port is an eventfd: the loop sleeps, and nothing listens on the network")
    func keepAliveIsNotANetworkSocket() async throws {
        let thread = NetworkThread(name: "curlew.t.keep")
        thread.start()
        let running = thread.running()
        let keepAlive = try #require(running.keepAliveDescriptor)
        #expect(ProcSelf.descriptorTarget(keepAlive) == "anon_inode:[eventfd]")

        // Kept alive, the loop sleeps in its run mode; without a source CFRunLoopRunInMode would
        // return at once and the thread would spin, never waiting.
        #expect(await waitUntil { CFRunLoopIsWaiting(running.runLoop) })

        // `SocketPort()` would listen on 0.0.0.0. No socket of this process listens on a wildcard
        // address (test servers bind 127.0.0.1 only; the isolated check below is stricter).
        let ours = ProcSelf.socketInodes()
        let wildcard = ProcSelf.listeningSockets().filter { ours.contains($0.inode) && $0.isWildcard }
        #expect(wildcard.isEmpty, "listening: \(wildcard)")
    }

    @Test("An idle loop sleeps, and wakes up for work")
    func idleLoopSleepsAndWakesForWork() async throws {
        let thread = NetworkThread(name: "curlew.t.wake")
        thread.start()
        let loop = thread.running().runLoop
        for _ in 0..<3 {
            #expect(await waitUntil { CFRunLoopIsWaiting(loop) })
            let before = thread.wakeUpCount
            // The kCFRunLoopAfterWaiting observer runs before the loop handles the block.
            let seen = await awaitCallback(timeout: .seconds(10)) { report in
                thread.perform(inModes: [.default]) { report(thread.wakeUpCount) }
            }
            #expect(try #require(seen) > before)
        }
    }

    @Test("Work a scheduler queues from its own network thread runs before the loop sleeps, without waking it")
    func performsFromTheThreadRunWithoutWakeUps() async throws {
        let thread = NetworkThread(name: "curlew.t.nudge")
        let scheduler = RunLoopScheduler(thread: thread)
        thread.start()
        let loop = thread.running().runLoop
        let chain = 200
        for _ in 0..<2 {
            #expect(await waitUntil { CFRunLoopIsWaiting(loop) })
            let before = thread.wakeUpCount
            // Each block queues the next from inside CF's block pass, where nothing else is due: the
            // case in which a loop that was neither woken nor nudged would sleep with a block queued.
            let last: Int? = await awaitCallback(timeout: .seconds(10)) { report in
                @Sendable func step(_ remaining: Int) {
                    if remaining == 0 {
                        report(thread.wakeUpCount)
                    } else {
                        scheduler.perform { step(remaining - 1) }
                    }
                }
                scheduler.perform { step(chain) }
            }
            // One wake-up for the first block, queued from this thread; none for the 200 after it
            // (a `CFRunLoopWakeUp` per block would show as one wake-up each).
            let woken = try #require(last) - before
            #expect(woken >= 1 && woken <= 3, "woken \(woken) times for \(chain + 1) blocks")
        }
        await scheduler.runOnContext { scheduler.shutdown {} }
    }

    // MARK: Modes

    @Test("Work in modes the thread does not run in is not served; a matching run mode serves it")
    func performsOutsideTheRunModeDoNotRun() async throws {
        let privateMode = RunLoop.Mode("curlew.test.private")
        let thread = NetworkThread(name: "curlew.t.mode", runMode: privateMode)
        let excluded = RunLoopScheduler(thread: thread, modes: [.common])  // common = default only
        let ran = Locked(false)
        excluded.perform { ran.set(true) }

        // Queued after it and in the run mode: CF runs the matching blocks of its queue in order in
        // one pass, so once this one ran, the excluded block was passed over, not merely not reached.
        for _ in 0..<2 {
            let marked = await awaitCallback(timeout: .seconds(10)) { report in
                thread.perform(inModes: [privateMode]) { report(true) }
            }
            #expect(marked == true)
            #expect(!ran.value)
        }

        // The same thread serves a scheduler whose modes include its run mode…
        let included = RunLoopScheduler(thread: thread, modes: [privateMode])
        #expect(await included.runOnContext { included.isOnContext } == true)
        // …and a thread running the default mode (one of the common modes) serves `.common` work.
        let defaultThread = NetworkThread(name: "curlew.t.mode2")
        let served = RunLoopScheduler(thread: defaultThread, modes: [.common])
        #expect(await served.runOnContext { served.isOnContext } == true)
        #expect(!ran.value)
    }

    // MARK: Callbacks

    @Test("Every callback runs on the network thread", arguments: RunLoopScheduler.SocketStrategy.allCases)
    func callbacksRunOnTheNetworkThread(_ strategy: RunLoopScheduler.SocketStrategy) async throws {
        let thread = NetworkThread(name: "curlew.t.calls")
        let scheduler = RunLoopScheduler(thread: thread, sockets: strategy)
        let threads = Locked<Set<Int32>>([])
        let record: @Sendable () -> Void = {
            threads.withLock { _ = $0.insert(ProcessInspector.currentThreadID() ?? -1) }
        }
        let probe = RecordingEventHandler(
            scheduler: scheduler,
            onSocketReady: { socket, _ in
                record()
                SocketPair.drain(socket)
            },
            onTimerFired: record)
        scheduler.bind(probe)
        let pair = try SocketPair()
        defer { pair.closePeer() }

        #expect(!scheduler.isOnContext)
        #expect(await scheduler.runOnContext { record(); return scheduler.isOnContext } == true)
        _ = await scheduler.runOnContext {
            scheduler.setInterest(.read, for: pair.local)
            scheduler.setTimer(.after(milliseconds: 0))
        }
        try pair.sendFromPeer()
        #expect(await waitUntil { probe.counts(for: pair.local).read >= 1 && probe.timerFireCount >= 1 })

        let threadID = try #require(thread.threadID)
        #expect(threads.value == [threadID])
        #expect(probe.callsOffContext == 0)
        #expect(await scheduler.shutdownAndWait())
    }

    @Test("Schedulers sharing a thread keep their own sockets, timer and handler")
    func schedulersOnOneThreadAreIndependent() async throws {
        let thread = NetworkThread(name: "curlew.t.pair")
        let first = RunLoopScheduler(thread: thread, sockets: .epollSource)
        let second = RunLoopScheduler(thread: thread, sockets: .cfSocket)
        let firstProbe = RecordingEventHandler(scheduler: first) { socket, _ in SocketPair.drain(socket) }
        let secondProbe = RecordingEventHandler(scheduler: second) { socket, _ in SocketPair.drain(socket) }
        first.bind(firstProbe)
        second.bind(secondProbe)
        let firstPair = try SocketPair()
        let secondPair = try SocketPair()
        defer {
            firstPair.closePeer()
            secondPair.closePeer()
        }

        _ = await first.runOnContext {
            first.setInterest(.read, for: firstPair.local)
            first.setTimer(.after(milliseconds: 0))
        }
        _ = await second.runOnContext { second.setInterest(.read, for: secondPair.local) }
        try firstPair.sendFromPeer()
        try secondPair.sendFromPeer()
        #expect(await waitUntil { firstProbe.counts(for: firstPair.local).read >= 1 && firstProbe.timerFireCount == 1 })
        #expect(await waitUntil { secondProbe.counts(for: secondPair.local).read >= 1 })

        #expect(firstProbe.counts(for: secondPair.local).total == 0)
        #expect(secondProbe.counts(for: firstPair.local).total == 0)
        #expect(secondProbe.timerFireCount == 0)
        #expect(await first.runOnContext { first.diagnostics.watchedSockets } == 1)
        #expect(await second.runOnContext { second.diagnostics.watchedSockets } == 1)
        #expect(await first.shutdownAndWait())
        #expect(await second.shutdownAndWait())
    }

    // MARK: Socket strategies

    @Test(
        "Write readiness is reported while wanted, and not after a disarm",
        arguments: RunLoopScheduler.SocketStrategy.allCases)
    func writeIsReportedUntilDisarmed(_ strategy: RunLoopScheduler.SocketStrategy) async throws {
        // CFSocket disarms its write callback after each event; the scheduler re-enables it.
        let scheduler = RunLoopScheduler(thread: NetworkThread(name: "curlew.t.write"), sockets: strategy)
        let pair = try SocketPair()
        defer { pair.closePeer() }
        let writes = Locked(0)
        let probe = RecordingEventHandler(scheduler: scheduler) { socket, events in
            guard events.contains(.write) else { return }
            let count = writes.withLock { value in
                value += 1
                return value
            }
            if count == 3 { scheduler.setInterest([], for: socket) }  // parked, like CURL_POLL_REMOVE
        }
        scheduler.bind(probe)

        _ = await scheduler.runOnContext { scheduler.setInterest(.write, for: pair.local) }
        #expect(await waitUntil { writes.value >= 3 })
        // Both strategies disarm synchronously, so no later pass may deliver another write event.
        for _ in 0..<3 { _ = await scheduler.runOnContext {} }
        #expect(writes.value == 3)
        let diagnostics = await scheduler.runOnContext { scheduler.diagnostics }
        #expect(diagnostics?.watchedSockets == 1, "an empty interest keeps the watch")
        #expect(diagnostics?.armedSockets == 0)
        #expect(await scheduler.shutdownAndWait())
    }

    @Test("A parked socket that hangs up leaves the epoll set instead of waking the loop forever")
    func parkedHangUpLeavesTheEpollSet() async throws {
        let scheduler = RunLoopScheduler(thread: NetworkThread(name: "curlew.t.park"), sockets: .epollSource)
        let probe = RecordingEventHandler(scheduler: scheduler)
        scheduler.bind(probe)
        let pair = try SocketPair()

        _ = await scheduler.runOnContext {
            scheduler.setInterest(.read, for: pair.local)
            scheduler.setInterest([], for: pair.local)  // parked in curl's pool
        }
        pair.closePeer()  // epoll reports EPOLLHUP even for an empty event mask
        let inSet: @Sendable () async -> Bool? = {
            await scheduler.runOnContext { (scheduler.watcher as? EpollSourceWatcher)?.isInEpollSet(pair.local) ?? true }
        }
        #expect(await waitUntil { await inSet() == false })
        #expect(probe.counts(for: pair.local).total == 0, "a parked socket reports nothing")
        #expect(await scheduler.runOnContext { scheduler.diagnostics.watchedSockets } == 1)

        // Armed again, it is back in the set and reports the hang-up.
        _ = await scheduler.runOnContext { scheduler.setInterest(.read, for: pair.local) }
        #expect(await inSet() == true)
        #expect(await waitUntil { probe.counts(for: pair.local).total >= 1 })
        #expect(await scheduler.shutdownAndWait())
    }

    @Test("A stale CFSocket left for a descriptor number is replaced, and the descriptor stays open")
    func staleCFSocketIsReplaced() async throws {
        let scheduler = RunLoopScheduler(thread: NetworkThread(name: "curlew.t.stale"), sockets: .cfSocket)
        let probe = RecordingEventHandler(scheduler: scheduler) { socket, _ in SocketPair.drain(socket) }
        scheduler.bind(probe)
        let pair = try SocketPair()
        defer { pair.closePeer() }
        let identity = try #require(ProcSelf.identity(of: pair.local))

        // What code that closes a descriptor without invalidating its CFSocket leaves behind: CF
        // still maps the number to the old CFSocket (close-on-invalidate on, another context).
        let stale = try #require(
            CFSocketCreateWithNative(
                kCFAllocatorDefault, pair.local, CFSocketCallBackType.readCallBack.rawValue, nil, nil))
        _ = await scheduler.runOnContext { scheduler.setInterest(.read, for: pair.local) }
        #expect(!CFSocketIsValid(stale), "the stale CFSocket was invalidated")
        #expect(ProcSelf.identity(of: pair.local) == identity, "CF did not close the descriptor")

        try pair.sendFromPeer()
        #expect(await waitUntil { probe.counts(for: pair.local).read >= 1 })
        #expect(await scheduler.shutdownAndWait())
    }

    // MARK: Timer and shutdown

    @Test("The timer re-armed from its own callout fires again")
    func timerReArmedInsideItsCalloutFiresAgain() async throws {
        // A non-repeating CFRunLoopTimer is invalidated after its first fire, even if re-armed.
        let scheduler = RunLoopScheduler(thread: NetworkThread(name: "curlew.t.timer"))
        let fires = Locked(0)
        let probe = RecordingEventHandler(
            scheduler: scheduler,
            onTimerFired: {
                let count = fires.withLock { value in
                    value += 1
                    return value
                }
                if count < 3 { scheduler.setTimer(.after(milliseconds: count == 1 ? 0 : 2)) }
            })
        scheduler.bind(probe)
        _ = await scheduler.runOnContext { scheduler.setTimer(.after(milliseconds: 1)) }
        #expect(await waitUntil { fires.value == 3 })
        #expect(await scheduler.runOnContext { scheduler.diagnostics.timerArmed } == false)
        #expect(await scheduler.shutdownAndWait())
        #expect(fires.value == 3)
    }

    @Test(
        "Shutdown closes every socket still watched and leaves the thread serving others",
        arguments: RunLoopScheduler.SocketStrategy.allCases)
    func shutdownClosesWhatIsLeft(_ strategy: RunLoopScheduler.SocketStrategy) async throws {
        let thread = NetworkThread(name: "curlew.t.down")
        let scheduler = RunLoopScheduler(thread: thread, sockets: strategy)
        weak var weakProbe: RecordingEventHandler?
        do {
            let probe = RecordingEventHandler(scheduler: scheduler)
            weakProbe = probe
            scheduler.bind(probe)
        }
        let armed = try SocketPair()
        let parked = try SocketPair()
        defer {
            armed.closePeer()
            parked.closePeer()
        }
        let identities = [ProcSelf.identity(of: armed.local), ProcSelf.identity(of: parked.local)]
        _ = await scheduler.runOnContext {
            scheduler.setInterest(.read, for: armed.local)
            scheduler.setInterest([], for: parked.local)
            scheduler.setTimer(.after(milliseconds: 60_000))
        }
        #expect(await scheduler.shutdownAndWait())

        // Closed: the numbers are free or hold some other file now.
        #expect(ProcSelf.identity(of: armed.local) != identities[0])
        #expect(ProcSelf.identity(of: parked.local) != identities[1])
        #expect(weakProbe == nil, "shutdown released the handler")
        let other = RunLoopScheduler(thread: thread, sockets: strategy)
        #expect(await other.runOnContext { other.isOnContext } == true)
    }

    // MARK: Isolated checks

    /// Process-wide facts other suites could disturb (they may start CF's socket thread, use
    /// `.shared`, or listen), checked in a child process (an exit test) that runs only these checks
    /// and prints one result line, which the parent asserts on.
    @Test("Isolated: .shared is lazy, nothing listens, .epollSource starts no CFSocket thread or UDP socket")
    func isolatedProcessChecks() async throws {
        let child = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            print(await IsolatedCheck.run())
        }
        let output = child?.standardOutputContent ?? []
        let result = ChildFacts.parse(output)
        if result.isEmpty { Issue.record("the child process printed no result:\n\(String(decoding: output, as: UTF8.self))") }
        #expect(result["shared-threads-before-use"] == "0", "\(result)")
        #expect(result["shared-threads-after-use"] == "1", "\(result)")
        #expect(result["listening-sockets"] == "0", "\(result)")
        #expect(result["epoll-events"] == "1", "\(result)")
        #expect(result["cfsocket-threads-after-epoll"] == "0", "\(result)")
        // The control: the same detection sees the thread once a CFSocket is used.
        #expect(result["cfsocket-threads-after-cfsocket"] == "1", "\(result)")
        // UDP: none with .epollSource. CF's socket manager wakes its select() thread through a pair
        // of UDP sockets it connects to each other on 127.0.0.1 (kept for the life of the process);
        // nothing else may appear, and nothing on any other address.
        #expect(result["udp-sockets-after-epoll"] == "0", "\(result)")
        #expect(result["udp-sockets-after-cfsocket"] == "2", "\(result)")
        #expect(result["udp-not-loopback-connected"] == "0", "\(result)")
    }
}

// MARK: - Helpers

/// The checks `isolatedProcessChecks` runs in its child process.
private enum IsolatedCheck {
    /// CF's socket manager thread, `com.apple.CFSocket.private`, as the kernel would keep it.
    ///
    /// On Linux CF's call to name it fails (26 bytes; the kernel takes 15, and
    /// `pthread_setname_np` rejects longer names with `ERANGE`), so the thread keeps the name it
    /// inherits from the thread that created it: the network thread, which creates the first
    /// CFSocket. So CF's thread is counted as any thread with the truncated name plus any second
    /// thread with the network thread's name.
    static let cfSocketThreadName = "com.apple.CFSoc"

    /// Runs the checks in this (child) process and returns the result line.
    static func run() async -> String {
        var facts = ChildFacts()
        func count(_ name: String) -> Int { ProcessInspector.threads().filter { $0.name == name }.count }
        func cfSocketThreads() -> Int {
            count(self.cfSocketThreadName) + max(0, count(NetworkThread.defaultName) - 1)
        }

        // An exit test's child inherits the parent's descriptors that lack close-on-exec, SwiftNIO's
        // listening sockets among them (the suites' test servers): those are not the network thread's.
        func listening() -> Set<UInt64> {
            let ours = ProcSelf.socketInodes()
            return Set(ProcSelf.listeningSockets().map(\.inode).filter { ours.contains($0) })
        }
        let inherited = listening()
        let shared = NetworkThread.shared  // created, not used
        facts["shared-threads-before-use"] = "\(count(NetworkThread.defaultName))"
        shared.start()
        facts["shared-threads-after-use"] = "\(count(NetworkThread.defaultName))"
        facts["listening-sockets"] = "\(listening().subtracting(inherited).count)"

        func udp() -> [ProcSelf.Listener] {
            let ours = ProcSelf.socketInodes()
            return ProcSelf.udpSockets().filter { ours.contains($0.inode) && !inheritedUDP.contains($0.inode) }
        }
        let inheritedUDP = Set(ProcSelf.udpSockets().map(\.inode))

        facts["epoll-events"] = await self.exercise(.epollSource) ? "1" : "0"
        facts["cfsocket-threads-after-epoll"] = "\(cfSocketThreads())"
        facts["udp-sockets-after-epoll"] = "\(udp().count)"
        _ = await self.exercise(.cfSocket)
        facts["cfsocket-threads-after-cfsocket"] = "\(cfSocketThreads())"
        let cfUDP = udp()
        facts["udp-sockets-after-cfsocket"] = "\(cfUDP.count)"
        facts["udp-not-loopback-connected"] = "\(cfUDP.filter { !$0.isLoopbackConnected }.count)"
        return facts.line()
    }

    /// Watches a socket with `strategy` on `.shared` until an event arrives; whether one did.
    private static func exercise(_ strategy: RunLoopScheduler.SocketStrategy) async -> Bool {
        let scheduler = RunLoopScheduler(sockets: strategy)
        let probe = RecordingEventHandler(scheduler: scheduler) { socket, _ in SocketPair.drain(socket) }
        scheduler.bind(probe)
        guard let pair = try? SocketPair() else { return false }
        defer { pair.closePeer() }
        _ = await scheduler.runOnContext { scheduler.setInterest(.read, for: pair.local) }
        guard (try? pair.sendFromPeer()) != nil else { return false }
        let delivered = await waitUntil { probe.counts(for: pair.local).read >= 1 }
        return await scheduler.shutdownAndWait() && delivered
    }
}

/// What `/proc/self` and `/proc/net` say about this process's descriptors and sockets.
private enum ProcSelf {
    struct Listener: CustomStringConvertible {
        var inode: UInt64
        /// The local address as `/proc/net/tcp*` prints it (hex address:port).
        var local: String
        /// Bound to 0.0.0.0 or :: (every interface).
        var isWildcard: Bool {
            guard let address = self.local.split(separator: ":").first else { return false }
            return address.allSatisfy { $0 == "0" }
        }
        /// The remote address, for a connected socket (hex address:port).
        var remote: String = ""
        var description: String { "inode \(self.inode) at \(self.local)" }

        /// Bound to 127.0.0.1 and connected to 127.0.0.1 (`/proc/net/udp` prints it `0100007F`).
        var isLoopbackConnected: Bool {
            self.local.hasPrefix("0100007F:") && self.remote.hasPrefix("0100007F:") && !self.remote.hasSuffix(":0000")
        }
    }

    /// Where `/proc/self/fd/<descriptor>` points, e.g. `socket:[123]` or `anon_inode:[eventfd]`.
    static func descriptorTarget(_ descriptor: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let length = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The inodes of every socket this process has open.
    static func socketInodes() -> Set<UInt64> {
        var inodes: Set<UInt64> = []
        for descriptor in ProcessInspector.openDescriptors() {
            guard let target = self.descriptorTarget(descriptor), target.hasPrefix("socket:[") else { continue }
            if let inode = UInt64(target.dropFirst("socket:[".count).dropLast()) { inodes.insert(inode) }
        }
        return inodes
    }

    /// Every TCP socket in LISTEN state (`0A`) in this network namespace, IPv4 and IPv6.
    static func listeningSockets() -> [Listener] {
        var listeners: [Listener] = []
        for path in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let table = ProcessInspector.readProcFile(path) else { continue }
            for row in table.split(separator: "\n").dropFirst() {
                let fields = row.split(separator: " ")
                guard fields.count > 9, fields[3] == "0A", let inode = UInt64(fields[9]) else { continue }
                listeners.append(Listener(inode: inode, local: String(fields[1])))
            }
        }
        return listeners
    }

    /// Every UDP socket in this network namespace, IPv4 and IPv6.
    static func udpSockets() -> [Listener] {
        var sockets: [Listener] = []
        for path in ["/proc/net/udp", "/proc/net/udp6"] {
            guard let table = ProcessInspector.readProcFile(path) else { continue }
            for row in table.split(separator: "\n").dropFirst() {
                let fields = row.split(separator: " ")
                guard fields.count > 9, let inode = UInt64(fields[9]) else { continue }
                sockets.append(Listener(inode: inode, local: String(fields[1]), remote: String(fields[2])))
            }
        }
        return sockets
    }

    /// The device and inode behind `descriptor`, or `nil` if it is closed: tells "closed, or now
    /// another file" from "still the same socket" even if the number is reused at once.
    static func identity(of descriptor: Int32) -> [UInt64]? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }
}
