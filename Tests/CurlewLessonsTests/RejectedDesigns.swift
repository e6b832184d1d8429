import CurlewRunLoop
import CurlewTestSupport
import CurlewTransport
import Foundation

// Small stand-ins for lesson 6: what the two rejected designs need beside Curlew's own parts.

/// A scheduler that forwards everything to another one and notes which thread did the engine's
/// work: every socket or timer event and every performed block (with when it started and ended, on
/// the watched thread), and every context-only call the engine made.
///
/// Lesson 6 wraps each design's scheduler in one to see whether network work ran on the "main"
/// thread, and to find the ticks that fell due while it did.
final class ObservedScheduler: TransferScheduler, Sendable {
    /// One piece of engine work on the watched thread, in `CFAbsoluteTime` seconds.
    struct Span: Sendable {
        var start: Double
        var end: Double
    }

    /// What was seen so far.
    struct Log: Sendable {
        /// Events and performed blocks, on any thread.
        var work = 0
        /// Events and performed blocks on the watched thread.
        var workOnWatchedThread = 0
        /// Context-only calls (socket interest, close, timer) made on the watched thread.
        var callsOnWatchedThread = 0
        /// The events and performed blocks on the watched thread, in order.
        var spans: [Span] = []
    }

    let base: any TransferScheduler
    let log = Locked(Log())
    private let watchedThread: Int32

    /// Wraps `base`, watching thread `watchedThread` (a kernel thread id).
    init(_ base: any TransferScheduler, watching watchedThread: Int32) {
        self.base = base
        self.watchedThread = watchedThread
    }

    /// Runs `body` as one piece of engine work: counted, and timed when on the watched thread.
    fileprivate func observe(_ body: () -> Void) {
        let onWatched = ProcessInspector.currentThreadID() == self.watchedThread
        let start = Date.timeIntervalSinceReferenceDate
        body()
        let end = Date.timeIntervalSinceReferenceDate
        self.log.withLock { log in
            log.work += 1
            if onWatched {
                log.workOnWatchedThread += 1
                log.spans.append(Span(start: start, end: end))
            }
        }
    }

    private func noteCall() {
        if ProcessInspector.currentThreadID() == self.watchedThread {
            self.log.withLock { $0.callsOnWatchedThread += 1 }
        }
    }

    var name: String { self.base.name }
    var isOnContext: Bool { self.base.isOnContext }
    var diagnostics: SchedulerDiagnostics { self.base.diagnostics }

    func bind(_ handler: any TransferSchedulerEventHandler) {
        self.base.bind(ObservingHandler(handler, scheduler: self))
    }

    func perform(_ work: @escaping @Sendable () -> Void) {
        self.base.perform { [self] in self.observe(work) }
    }

    func setInterest(_ interest: SocketInterest, for socket: Int32) {
        self.noteCall()
        self.base.setInterest(interest, for: socket)
    }

    func close(socket: Int32) {
        self.noteCall()
        self.base.close(socket: socket)
    }

    func setTimer(_ request: TimerRequest) {
        self.noteCall()
        self.base.setTimer(request)
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.base.shutdown(completion)
    }
}

/// The engine's handler, seen through an ``ObservedScheduler``.
private final class ObservingHandler: TransferSchedulerEventHandler {
    private let handler: any TransferSchedulerEventHandler
    private let scheduler: ObservedScheduler

    init(_ handler: any TransferSchedulerEventHandler, scheduler: ObservedScheduler) {
        self.handler = handler
        self.scheduler = scheduler
    }

    func socketBecameReady(_ socket: Int32, events: SocketEvents) {
        self.scheduler.observe { self.handler.socketBecameReady(socket, events: events) }
    }

    func timerFired() {
        self.scheduler.observe { self.handler.timerFired() }
    }
}

/// The "main thread's other work" of lesson 6: a timer on a run loop that should fire every
/// millisecond, re-armed from its own callout, noting when each fire was due and when it came.
final class TickProbe: Sendable {
    /// One fire, in `CFAbsoluteTime` seconds.
    struct Tick: Sendable {
        var due: Double
        var fired: Double
    }

    static let interval = 0.001
    let ticks = Locked<[Tick]>([])
    private let stopped = Locked(false)

    /// Starts ticking on `thread`'s run loop (in its run mode).
    init(on thread: NetworkThread) {
        let ticks = self.ticks
        let stopped = self.stopped
        thread.perform(inModes: [thread.runMode]) {
            let due = Locked(Date.timeIntervalSinceReferenceDate + Self.interval)
            // Repeating with a huge interval: re-armed by moving the fire date, like Curlew's own timer.
            let timer = Timer(fire: Date(timeIntervalSinceReferenceDate: due.value), interval: 1.0e9, repeats: true) { timer in
                let now = Date.timeIntervalSinceReferenceDate
                guard !stopped.value else {
                    timer.invalidate()
                    return
                }
                ticks.withLock { $0.append(Tick(due: due.value, fired: now)) }
                due.set(now + Self.interval)
                timer.fireDate = Date(timeIntervalSinceReferenceDate: due.value)
            }
            RunLoop.current.add(timer, forMode: thread.runMode)
        }
    }

    /// Stops the ticks (the timer invalidates itself at its next fire).
    func stop() {
        self.stopped.set(true)
    }
}

/// Keeps `inFlight` transfers of `url` running on `engine`: each completion starts the next, until
/// ``stop()``.
final class SteadyLoad: TransferDelegate, Sendable {
    private struct State: Sendable {
        var running = true
        var inFlight = 0
        var completed = 0
        var failed = 0
    }

    private let engine: TransferEngine
    private let url: URL
    private let state = Locked(State())

    init(engine: TransferEngine, url: URL) {
        self.engine = engine
        self.url = url
    }

    /// Starts `count` transfers (call it on the thread that plays the caller, e.g. the main thread).
    func start(_ count: Int) {
        for _ in 0..<count { self.startOne() }
    }

    /// Starts no more transfers.
    func stop() {
        self.state.withLock { $0.running = false }
    }

    var completed: Int { self.state.withLock { $0.completed } }
    var failed: Int { self.state.withLock { $0.failed } }
    var inFlight: Int { self.state.withLock { $0.inFlight } }

    private func startOne() {
        self.state.withLock { $0.inFlight += 1 }
        self.engine.makeTransfer(TransferRequest(url: self.url), delegate: self).start()
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        let again = self.state.withLock { state -> Bool in
            state.inFlight -= 1
            state.completed += 1
            if case .failure = result { state.failed += 1 }
            return state.running
        }
        if again { self.startOne() }
    }
}
