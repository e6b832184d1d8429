// <DESC>
// The first design the articles reject (claim 6a of Docs/Lessons.md): every connection on the main
// run loop. The main thread then runs every transfer callback, and its own work — here a timer
// that should tick every millisecond — waits behind them. The example keeps 128 small GETs in
// flight for two seconds, once on Curlew's own context and once on the main run loop, while the
// tick measures how late it fires.
// </DESC>
@preconcurrency import CoreFoundation
import Curlew
import ExampleSupport
import Foundation

let inFlight = 128
let window: Duration = .seconds(2)
let tickSeconds = 0.001

/// Keeps `inFlight` transfers running on `engine` until told to stop, noting which thread ran each
/// completion and whether any transfer failed.
final class Load: Sendable {
    let engine: TransferEngine
    let url: URL
    let completed = Shared(0)
    let failed = Shared(0)
    let running = Shared(0)
    let onMainThread = Shared(0)
    let elsewhere = Shared(0)
    let refilling = Shared(true)

    init(engine: TransferEngine, url: URL) {
        self.engine = engine
        self.url = url
    }

    func start() {
        for _ in 0..<inFlight { self.startOne() }
    }

    func startOne() {
        self.running.withLock { $0 += 1 }
        self.engine.makeTransfer(TransferRequest(url: self.url), delegate: Completion(load: self)).start()
    }

    func completed(_ result: Result<TransferResponse, TransferError>) {
        if ThreadNames.currentID() == getpid() {
            self.onMainThread.withLock { $0 += 1 }
        } else {
            self.elsewhere.withLock { $0 += 1 }
        }
        switch result {
        case .success: self.completed.withLock { $0 += 1 }
        case .failure: self.failed.withLock { $0 += 1 }
        }
        self.running.withLock { $0 -= 1 }
        if self.refilling.value { self.startOne() }
    }
}

/// One transfer's delegate: reports its completion to the load.
final class Completion: TransferDelegate, Sendable {
    let load: Load
    init(load: Load) { self.load = load }
    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.load.completed(result)
    }
}

/// A 1 ms tick on the main run loop that records how late each tick fired: each tick is armed
/// 1 ms after the previous one ran, so a late tick causes no burst of catch-up ticks.
///
/// Safety: `@unchecked Sendable` because it is made, installed, fired and read on the main thread
/// only.
final class Tick: @unchecked Sendable {
    private var timer: CFRunLoopTimer?
    private var expected = ContinuousClock.now
    private(set) var lateness: [Duration] = []

    func install() {
        self.expected = ContinuousClock.now + .milliseconds(1)
        // Repeating, with a huge interval: a one-shot CF timer dies after it fires even when its
        // fire date is moved.
        let timer = CFRunLoopTimerCreateWithHandler(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + tickSeconds, 1.0e9, 0, 0) { [self] timer in
            let now = ContinuousClock.now
            self.lateness.append(now > self.expected ? now - self.expected : .zero)
            self.expected = ContinuousClock.now + .milliseconds(1)
            CFRunLoopTimerSetNextFireDate(timer, CFAbsoluteTimeGetCurrent() + tickSeconds)
        }
        self.timer = timer
        CFRunLoopAddTimer(CFRunLoopGetMain(), timer, kCFRunLoopCommonModes)
    }

    func invalidate() {
        if let timer { CFRunLoopTimerInvalidate(timer) }
        self.timer = nil
    }
}

/// The `fraction` quantile of `values`.
func quantile(_ values: [Duration], _ fraction: Double) -> Duration {
    guard !values.isEmpty else { return .zero }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
}

/// Runs the main run loop for `duration` (it must run even when the load is elsewhere: the tick is
/// on it).
func runMainLoop(for duration: Duration) {
    let deadline = ContinuousClock.now + duration
    while ContinuousClock.now < deadline {
        let (seconds, attoseconds) = (deadline - ContinuousClock.now).components
        _ = CFRunLoopRunInMode(kCFRunLoopDefaultMode, Double(seconds) + Double(attoseconds) / 1e18, false)
    }
}

/// Runs the load on `scheduler` for the window with the tick on the main loop, and reports.
/// - Returns: The load, for the checks.
func measure(_ title: String, scheduler: any TransferScheduler) -> (load: Load, tick: Tick) {
    var configuration = TransferEngine.Configuration()
    configuration.maximumConnectionsPerHost = inFlight
    let engine = TransferEngine(scheduler: scheduler, configuration: configuration)
    let load = Load(engine: engine, url: server.url(.bytes(13)))
    let tick = Tick()
    tick.install()
    load.start()
    runMainLoop(for: window)
    tick.invalidate()
    load.refilling.set(false)
    // The main-loop engine needs the main loop to finish what is still in flight.
    while load.running.value > 0 { runMainLoop(for: .milliseconds(10)) }
    let shutDown = Shared(false)
    engine.shutdown { shutDown.set(true) }
    while !shutDown.value { runMainLoop(for: .milliseconds(10)) }

    let ticks = tick.lateness
    Report.say("\(title): \(load.completed.value) GETs done (\(load.failed.value) failed) in \(window),"
        + " \(load.onMainThread.value) completions on the main thread, \(load.elsewhere.value) elsewhere.")
    let lateTicks = ticks.filter { $0 > .milliseconds(1) }.count
    Report.say("  the 1 ms tick fired \(ticks.count) times, \(lateTicks) of them more than 1 ms late; late by"
        + " \(Waiting.milliseconds(quantile(ticks, 0.5))) at the median, \(Waiting.milliseconds(quantile(ticks, 0.99))) at p99,"
        + " \(Waiting.milliseconds(ticks.max() ?? .zero)) at most.")
    return (load, tick)
}

Report.section("\(inFlight) small GETs in flight for \(window), a 1 ms tick on the main run loop (claim 6a)")
let own = measure("Curlew on its own context (DispatchScheduler)", scheduler: DispatchScheduler(label: "example.lateness"))
let onMain = measure("Every transfer on the main run loop (RunLoopScheduler(context: .main))",
                     scheduler: RunLoopScheduler(context: .main, sockets: .cfSocket))
Report.say("The figures above depend on this machine and what else runs on it; the committed benchmark run measured a"
    + " 1 ms tick 9.7 ms late at the median (p99 13.5 ms) with main-runloop, against 11–18 µs with any Curlew backend"
    + " (Docs/results/2026-11-21-xeon-2vcpu/results.md, \"Main-thread lateness under load\").")
Report.check(6, own.load.onMainThread.value == 0 && own.load.completed.value > 0
             && onMain.load.elsewhere.value == 0 && onMain.load.completed.value > 0
             && own.load.failed.value == 0 && onMain.load.failed.value == 0,
             "with everything on the main run loop, the main thread runs every transfer callback, so its other work (the tick) waits behind them; on Curlew's own context it runs none")
Report.finish()
