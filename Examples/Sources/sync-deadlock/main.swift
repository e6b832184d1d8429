// <DESC>
// Why the operation must be asynchronous (claims 1, 8 and 9 of Docs/Lessons.md). Callbacks come
// from the context a transfer is scheduled on: while that context does not run, nothing completes.
// So an operation whose `start()` (or `main()`) blocks *on that context* until its transfer ends
// waits for callbacks queued behind itself — a deadlock, here bounded by a one-second timeout.
// `RequestOperation.start()` returns at once instead, and works without a queue: start it, then
// `waitUntilFinished()`.
// </DESC>
import Curlew
import ExampleSupport
import Foundation

/// A synchronous operation, the wrong way: `main()` starts a transfer and blocks its thread until
/// the transfer completes or `timeout` passes.
///
/// Safety: `@unchecked Sendable` because its own state is in `Shared` boxes and the rest is
/// immutable.
final class SynchronousFetchOperation: Operation, @unchecked Sendable {
    /// How `main()` ended.
    let timedOut = Shared<Bool?>(nil)
    /// The transfer's delegate: its completion may come after `main()` gave up.
    let delegate = NotingDelegate()
    private let engine: TransferEngine
    private let url: URL
    private let timeout: Duration

    init(engine: TransferEngine, url: URL, timeout: Duration) {
        self.engine = engine
        self.url = url
        self.timeout = timeout
    }

    override func main() {
        self.engine.makeTransfer(TransferRequest(url: self.url), delegate: self.delegate).start()
        self.timedOut.set(self.delegate.wait(timeout: self.timeout) == nil)
    }
}

for backend in [ExampleBackend.dispatch, .runLoopEpoll] {
    let engine = TransferEngine(scheduler: backend.makeScheduler(thread: "Example.deadlock"))
    let url = server.url(.bytes(1_000))
    let context = backend == .dispatch ? "the engine's serial queue" : "the network thread"

    // Claim 1: a context that does not run completes nothing.
    Report.section("\(backend.rawValue): a context that does not run completes nothing (claim 1)")
    let release = DispatchSemaphore(value: 0)
    let held = Shared(false)
    engine.scheduler.perform {
        held.set(true)
        release.wait()
    }
    Waiting.until { held.value }
    let waiting = NotingDelegate()
    engine.makeTransfer(TransferRequest(url: url), delegate: waiting).start()
    let blocked = Waiting.holds(throughout: .milliseconds(300)) { !waiting.isDone }
    Report.say("With \(context) blocked on a semaphore, a GET of 1,000 bytes: completed within 300 ms? \(!blocked)")
    release.signal()
    let bytes = (try? waiting.wait()?.get())?.body?.count
    Report.say("Released: completed with \(bytes.map { "\($0) bytes" } ?? "nothing").")
    Report.check(1, blocked && bytes == 1_000,
                 "the callbacks are delivered by the context the transfer is scheduled on: stopped, it completes nothing; running again, it does")

    // Claim 8: start() must return before the work is done.
    Report.section("\(backend.rawValue): start() returns before the work is done (claim 8)")
    let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
    let afterStart = Shared<(executing: Bool, finished: Bool)?>(nil)
    engine.scheduler.perform {
        operation.start()
        afterStart.set((operation.isExecuting, operation.isFinished))
    }
    operation.waitUntilFinished()
    Report.say("RequestOperation.start() called on \(context) itself returned with isExecuting = \(afterStart.value?.executing ?? false),"
        + " isFinished = \(afterStart.value?.finished ?? true); it finished afterwards with \(operation.responseData?.count ?? 0) bytes.")
    Report.check(8, afterStart.value?.executing == true && afterStart.value?.finished == false && operation.responseData?.count == 1_000,
                 "an asynchronous operation's start() returns at once, even on the network context, and completes later")

    let synchronous = SynchronousFetchOperation(engine: engine, url: url, timeout: .seconds(1))
    let started = ContinuousClock.now
    engine.scheduler.perform { synchronous.start() }  // Foundation's start() runs main() right here
    Waiting.until { synchronous.timedOut.value != nil }
    let gaveUpAfter = ContinuousClock.now - started
    Report.say("A synchronous operation run on \(context): main() starts a transfer and waits for it.")
    Report.say("It gave up after \(Waiting.milliseconds(gaveUpAfter)): timed out = \(synchronous.timedOut.value ?? false)."
        + " The callbacks it waited for were queued on the context it was blocking.")
    let completedLater = synchronous.delegate.wait() != nil
    Report.say("Once main() returned the context, the transfer completed: \(completedLater) — nothing was lost, only blocked.")
    Report.check(8, synchronous.timedOut.value == true && completedLater,
                 "a synchronous operation that blocks its context waiting for that context's callbacks never finishes (deadlock, cut here by a timeout)")

    // Claim 9: no queue needed.
    Report.section("\(backend.rawValue): an operation without a queue (claim 9)")
    let alone = RequestOperation(request: TransferRequest(url: url), engine: engine)
    alone.start()
    alone.waitUntilFinished()
    Report.say("start() by hand on the main thread, then waitUntilFinished(): isFinished = \(alone.isFinished),"
        + " \(alone.responseData?.count ?? 0) bytes.")
    Report.check(9, alone.isFinished && alone.responseData?.count == 1_000,
                 "an operation also works without a queue: start it, wait for isFinished")
    engine.shutDownAndWait()
}
Report.finish()
