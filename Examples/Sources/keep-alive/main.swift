// <DESC>
// The network thread's keep-alive (claims 2, 3 and 5 of Docs/Lessons.md): a run loop with no input
// source returns at once; `do { run } while (true)` keeps the thread alive by spinning; a port — or
// a timer, or a never-signalled source — keeps it asleep instead. Then Curlew's own `NetworkThread`:
// made once, lazily, named, alive for the whole process; and a loop running another mode serves
// nothing.
// </DESC>
@preconcurrency import CoreFoundation
import Curlew
import ExampleSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A run loop carried to the example's thread to be stopped.
///
/// Safety: `@unchecked Sendable` because the only call made with it off its own thread is
/// `CFRunLoopStop`, which CoreFoundation allows from any thread.
struct LoopHandle: @unchecked Sendable {
    let loop: CFRunLoop
}

/// What one keep-alive style did while its thread "ran its run loop" for a while.
struct StyleRun: Sendable {
    /// How many times `run(mode:before:)` returned.
    var returns = 0
    /// CPU time the thread used, measured on the thread itself.
    var cpu: Duration = .zero
}

/// The CPU time the calling thread has used.
func threadCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
}

/// Runs a thread that keeps calling `RunLoop.current.run(mode:before:)` after `install` added (or
/// did not add) something to its loop, for `duration` — unless the loop is stopped first. Counts
/// how often `run` returned and the CPU the thread burnt.
func runStyle(for duration: Duration, install: @escaping @Sendable () -> Void) -> StyleRun {
    let result = Shared<StyleRun?>(nil)
    let loop = Shared<LoopHandle?>(nil)
    let deadline = ContinuousClock.now + duration
    let thread = Thread {
        install()
        loop.set(LoopHandle(loop: CFRunLoopGetCurrent()))
        let startCPU = threadCPUTime()
        var returns = 0
        // `do { run } while (true)`, bounded so the example ends.
        while ContinuousClock.now < deadline {
            _ = RunLoop.current.run(mode: .default, before: .distantFuture)
            returns += 1
        }
        result.set(StyleRun(returns: returns, cpu: threadCPUTime() - startCPU))
    }
    thread.start()
    // A loop that sleeps never looks at the deadline: stop it once the time is up.
    Waiting.until { ContinuousClock.now >= deadline }
    while result.value == nil {
        if let handle = loop.value { CFRunLoopStop(handle.loop) }
        usleep(1_000)
    }
    return result.value ?? StyleRun()
}

let window: Duration = .milliseconds(300)

// MARK: Claim 2: no source, no loop

Report.section("A run loop with no input source (claim 2)")
let bare = Shared<(returned: Bool, after: Duration)?>(nil)
Thread {
    let start = ContinuousClock.now
    let returned = RunLoop.current.run(mode: .default, before: .distantFuture)
    bare.set((returned, ContinuousClock.now - start))
}.start()
Waiting.until { bare.value != nil }
Report.say("RunLoop.current.run(mode: .default, before: .distantFuture) on a new thread returned \(bare.value?.returned ?? true)"
    + " after \(Waiting.milliseconds(bare.value?.after ?? .zero)), although it was asked to run until the distant future.")
Report.check(2, bare.value?.returned == false,
             "a run loop with no input source returns at once: a thread that only runs its loop falls through and ends")

Report.section("Keep-alive style 1: do { run } while (true)")
let spin = runStyle(for: window) {}
Report.say("In \(window) the loop returned \(spin.returns) times and the thread used \(Waiting.milliseconds(spin.cpu)) of CPU.")
Report.check(2, spin.returns > 1, "the loop style keeps the thread alive, by spinning: run keeps returning at once")

Report.section("Keep-alive style 2: a port (the articles' [NSMachPort port])")
Report.linux("there is no NSMachPort or MessagePort, Port() traps, and SocketPort() listens on TCP 0.0.0.0"
    + " (any host could connect); this port is a SocketPort over one end of an AF_UNIX socketpair.")
var pair: [Int32] = [0, 0]
guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { Report.abort("socketpair failed") }
let portSocket = pair[0]
let port = runStyle(for: window) {
    guard let port = SocketPort(protocolFamily: AF_UNIX, socketType: Int32(SOCK_STREAM.rawValue),
                                protocol: 0, socket: portSocket) else { return }
    RunLoop.current.add(port, forMode: .default)
}
Report.say("In \(window) run returned \(port.returns) time(s) — only when the example stopped it — and the thread used"
    + " \(Waiting.milliseconds(port.cpu)) of CPU.")
Report.check(2, port.returns == 1, "a port keeps the loop waiting: run sleeps until something arrives (nothing did) or it is stopped")

Report.section("Keep-alive style 3: a timer in the distant future, or a source nobody signals")
let timer = runStyle(for: window) {
    RunLoop.current.add(Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }, forMode: .default)
}
let source = runStyle(for: window) {
    var context = CFRunLoopSourceContext()
    context.perform = { _ in }
    if let source = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context) {
        CFRunLoopAddSource(CFRunLoopGetCurrent(), source, kCFRunLoopDefaultMode)
    }
}
Report.say("Timer: run returned \(timer.returns) time(s), \(Waiting.milliseconds(timer.cpu)) CPU."
    + " Version-0 source: \(source.returns) time(s), \(Waiting.milliseconds(source.cpu)) CPU.")
Report.check(2, timer.returns == 1 && source.returns == 1,
             "anything in the mode keeps the loop asleep: a timer that never fires, a source nobody signals")
Report.say("Curlew's NetworkThread uses a version-1 source whose port is an eventfd nobody writes: no socket, no helper thread.")
Report.linux("RunLoop.perform (CFRunLoopPerformBlock) only queues a block and does not wake a sleeping loop; NetworkThread"
    + " follows every perform with CFRunLoopWakeUp.")

// MARK: Claim 3: made once, lazily, named, alive for good

Report.section("Curlew's network thread: made once, lazily, named (claim 3)")
let threadName = "Example.network"
let networkThread = NetworkThread(name: threadName)
let before = ThreadNames.all().filter { $0 == threadName }.count
Report.say("NetworkThread(name: \"\(threadName)\") made; isStarted = \(networkThread.isStarted); threads with that name: \(before).")
let engines = (0..<3).map { _ in TransferEngine(scheduler: RunLoopScheduler(thread: networkThread, sockets: .epollSource)) }
for (index, engine) in engines.enumerated() {
    let delegate = NotingDelegate()
    engine.makeTransfer(TransferRequest(url: server.url(.bytes(100))), delegate: delegate).start()
    let status = (try? delegate.wait()?.get())?.head.status.code
    Report.say("engine \(index + 1): GET /bytes/100 → \(status.map(String.init) ?? "no response")")
}
let during = ThreadNames.all().filter { $0 == threadName }.count
for engine in engines { engine.shutDownAndWait() }
let after = ThreadNames.all().filter { $0 == threadName }.count
Report.say("Threads named \(threadName): \(during) while three engines used it, \(after) after all three shut down.")
Report.check(3, before == 0 && during == 1 && after == 1 && networkThread.isStarted,
             "the network thread is created on first use, exactly once, named, and outlives its engines")

// MARK: Claim 5: modes

Report.section("Run-loop modes (claim 5)")
let custom = RunLoop.Mode("ExampleMode")
let defaultModeThread = NetworkThread(name: "Example.default", runMode: .default)
let unserved = TransferEngine(scheduler: RunLoopScheduler(thread: defaultModeThread, modes: [custom], sockets: .epollSource))
let stuck = NotingDelegate()
unserved.makeTransfer(TransferRequest(url: server.url(.bytes(10))), delegate: stuck).start()
let neverServed = Waiting.holds(throughout: .milliseconds(500)) { !stuck.isDone }
Report.say("Transfers scheduled in mode \"ExampleMode\" on a thread that runs the default mode: completed after 500 ms? \(!neverServed)")
let customModeThread = NetworkThread(name: "Example.custom", runMode: custom)
let served = TransferEngine(scheduler: RunLoopScheduler(thread: customModeThread, modes: [custom], sockets: .epollSource))
let servedDelegate = NotingDelegate()
served.makeTransfer(TransferRequest(url: server.url(.bytes(10))), delegate: servedDelegate).start()
let servedBody = (try? servedDelegate.wait()?.get())?.body?.count
Report.say("The same on a thread that runs \"ExampleMode\": \(servedBody.map { "\($0) bytes" } ?? "nothing").")
let common = TransferEngine(scheduler: RunLoopScheduler(thread: defaultModeThread, modes: [.common], sockets: .epollSource))
let commonDelegate = NotingDelegate()
common.makeTransfer(TransferRequest(url: server.url(.bytes(10))), delegate: commonDelegate).start()
let commonBody = (try? commonDelegate.wait()?.get())?.body?.count
Report.say("Scheduled in the common modes (what AFNetworking used) on the default-mode thread: \(commonBody.map { "\($0) bytes" } ?? "nothing").")
Report.check(5, neverServed && servedBody == 10 && commonBody == 10,
             "a loop running another mode does not serve the transfers; the same mode, or the common modes, does")
Report.say("(The first engine can never be served, so it is left behind; the process ends here.)")
served.shutDownAndWait()
common.shutDownAndWait()
Report.finish()
