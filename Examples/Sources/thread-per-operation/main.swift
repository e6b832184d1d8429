// <DESC>
// The second design the articles reject, and why GCD needs no network thread (claims 6b and 7 of
// Docs/Lessons.md). Creating a thread per task costs a thread each time; GCD keeps a pool and runs
// blocks on it. A run-loop thread per operation never exits (its loop is kept alive for good), so
// the threads and their memory grow with the number of operations, out of any pool's control. The
// example runs the same 100 slow GETs three ways and counts the process's threads.
// </DESC>
@preconcurrency import CoreFoundation
import Curlew
import ExampleSupport
import Foundation

let count = 100
let delay = 1_000  // ms: long enough that all the requests are in flight at once

/// The most threads the process had while `isRunning` held, sampled every 5 ms.
func peakThreads(while isRunning: () -> Bool) -> Int {
    var peak = ThreadNames.count()
    while isRunning() {
        peak = max(peak, ThreadNames.count())
        usleep(5_000)
    }
    return max(peak, ThreadNames.count())
}

/// Runs `count` GETs of `/delay/1000` on one engine and reports the threads it took.
/// - Returns: The threads added at the peak, and the labels of the threads that ran the callbacks.
func sharedEngine(_ title: String, _ scheduler: any TransferScheduler) -> (added: Int, callbackThreads: Set<String>) {
    let engine = TransferEngine(scheduler: scheduler, configuration: {
        var configuration = TransferEngine.Configuration()
        configuration.maximumConnectionsPerHost = count
        return configuration
    }())
    let baseline = ThreadNames.count()
    let delegates = (0..<count).map { _ in NotingDelegate() }
    for delegate in delegates {
        engine.makeTransfer(TransferRequest(url: server.url(.delay(delay))), delegate: delegate).start()
    }
    let peak = peakThreads { !delegates.allSatisfy(\.isDone) }
    let ok = delegates.filter { (try? $0.result.value?.get()) != nil }.count
    let labels = Set(delegates.flatMap { $0.threads.value }.map(ThreadNames.label(of:)))
    Report.say("\(title): \(ok) of \(count) GETs done; threads \(baseline) → \(peak) at the peak (+\(peak - baseline));"
        + " callbacks ran on: \(labels.sorted().joined(separator: ", ")).")
    engine.shutDownAndWait()
    return (peak - baseline, labels)
}

/// One operation of the rejected design: a thread of its own whose run loop is kept alive by a
/// source nobody signals, with an engine of its own on that loop. The thread never exits.
func startThreadPerOperation(_ delegate: NotingDelegate) {
    let thread = Thread {
        var context = CFRunLoopSourceContext()
        context.perform = { _ in }
        if let keepAlive = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context) {
            CFRunLoopAddSource(CFRunLoopGetCurrent(), keepAlive, kCFRunLoopCommonModes)
        }
        let engine = TransferEngine(scheduler: RunLoopScheduler(context: .currentThread(), sockets: .epollSource))
        engine.makeTransfer(TransferRequest(url: server.url(.delay(delay))), delegate: delegate).start()
        while true {  // the operation's thread runs its loop for good: nobody ever stops it
            _ = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1.0e10, false)
        }
    }
    thread.name = "op-thread"
    thread.start()
}

// MARK: Claim 7: a pool, not a thread per task

Report.section("Threads are costly; GCD keeps a pool (claim 7)")
let pooled = Shared<Set<Int32>>([])
let group = DispatchGroup()
for _ in 0..<200 {
    DispatchQueue.global().async(group: group) {
        let id = ThreadNames.currentID()
        pooled.withLock { _ = $0.insert(id) }
    }
}
group.wait()
let own = Shared<Set<Int32>>([])
let ownDone = DispatchSemaphore(value: 0)
for _ in 0..<200 {
    Thread {
        let id = ThreadNames.currentID()
        own.withLock { _ = $0.insert(id) }
        ownDone.signal()
    }.start()
}
for _ in 0..<200 { _ = ownDone.wait(timeout: .now() + 30) }
Report.say("200 blocks on a global queue ran on \(pooled.value.count) pooled thread(s); 200 Thread objects were \(own.value.count) threads.")
Report.linux("libdispatch's pool is small, about two threads per CPU, and barely grows when its threads block; Swift's"
    + " cooperative pool shares it. Curlew's contexts and processing queues are serial queues or its own thread, which"
    + " libdispatch always serves, so operations still finish when other code blocks every pool thread.")
Report.check(7, pooled.value.count < 100 && own.value.count == 200,
             "GCD keeps a pool and dispatches blocks onto it instead of creating a thread per task")

// MARK: Claims 6b and 7 with transfers

Report.section("\(count) GETs of /delay/\(delay) in flight at once (claims 6b and 7)")
let rssBefore = ThreadNames.residentMiB()
let dispatch = sharedEngine("DispatchScheduler (a serial queue, no thread of its own)", DispatchScheduler(label: "example.pool"))
let networkThread = sharedEngine("RunLoopScheduler on one network thread",
                                 RunLoopScheduler(thread: NetworkThread(name: "Example.network"), sockets: .epollSource))
let curlewThreads = dispatch.callbackThreads.filter { $0.hasPrefix("Curlew") || $0.hasPrefix("Example") }
Report.check(7, curlewThreads.isEmpty && dispatch.added < count / 4,
             "the delegate-queue model (DispatchScheduler) needs no dedicated thread: its callbacks ran on pooled threads")

let baseline = ThreadNames.count()
let rssShared = ThreadNames.residentMiB()
let delegates = (0..<count).map { _ in NotingDelegate() }
for delegate in delegates { startThreadPerOperation(delegate) }
let peak = peakThreads { !delegates.allSatisfy(\.isDone) }
let ok = delegates.filter { (try? $0.result.value?.get()) != nil }.count
usleep(200_000)
let afterwards = ThreadNames.count()
let rssAfter = ThreadNames.residentMiB()
Report.say("A run-loop thread per operation: \(ok) of \(count) GETs done; threads \(baseline) → \(peak) at the peak (+\(peak - baseline)),"
    + " still \(afterwards) after every request finished: each operation's thread sleeps in its run loop for good.")
Report.say(String(format: "Resident memory: %.1f MiB before the shared engines, %.1f MiB after them, %.1f MiB with the operation threads.",
                  rssBefore, rssShared, rssAfter))
Report.check(6, peak - baseline >= count && afterwards - baseline >= count && networkThread.added <= 2 && dispatch.added < count / 4,
             "a run-loop thread per operation grows the threads with the operations, and they never exit; one network thread or GCD's pool stays flat")
Report.say("The committed benchmark run: with 1,000 transfers in flight, thread-per-operation peaked at about 1,190 threads and"
    + " 272 MiB, against 18–23 threads and 52–62 MiB for Curlew (Docs/results/2026-11-21-xeon-2vcpu/results.md, \"Thread growth\").")
Report.finish()
