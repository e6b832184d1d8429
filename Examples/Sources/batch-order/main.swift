// <DESC>
// Operations, dependencies, dispatch groups, and a batch's completion order (claims 16–19 of
// Docs/Lessons.md). A BlockOperation started by hand runs on the calling thread, on a queue
// elsewhere; on Linux its extra execution blocks run one after another. A dependency holds an
// operation back even when both are queued together. A group's notify runs once every task has
// left it. A batch reports progress after each member's own completion handler and completes
// after all of them — also when members fail, and with no members at all.
// </DESC>
import Curlew
import CurlewTestServer
import ExampleSupport
import Foundation

// MARK: Claim 16

Report.section("BlockOperation: by hand, on a queue, extra execution blocks (claim 16)")
let byHandThread = Shared<Int32?>(nil)
let byHand = BlockOperation { byHandThread.set(ThreadNames.currentID()) }
byHand.start()
let finishedBeforeReturn = byHand.isFinished
let queue = OperationQueue()
let queuedThread = Shared<Int32?>(nil)
let queued = BlockOperation { queuedThread.set(ThreadNames.currentID()) }
queue.addOperation(queued)
queued.waitUntilFinished()
Report.say("Started by hand on main: the block ran on \(byHandThread.value.map(ThreadNames.label(of:)) ?? "nothing"),"
    + " finished before start() returned: \(finishedBeforeReturn). On a queue: \(queuedThread.value.map(ThreadNames.label(of:)) ?? "nothing").")
Report.check(16, byHandThread.value == getpid() && finishedBeforeReturn && queuedThread.value != nil && queuedThread.value != getpid(),
             "a BlockOperation started by hand runs on the calling thread; on a queue it runs on another thread")

let order = Shared<[String]>([])
let blockThreads = Shared<Set<Int32>>([])
let secondStarted = DispatchSemaphore(value: 0)
let firstSawSecond = Shared<Bool?>(nil)
let blocks = BlockOperation {
    order.withLock { $0.append("A") }
    blockThreads.withLock { _ = $0.insert(ThreadNames.currentID()) }
    firstSawSecond.set(secondStarted.wait(timeout: .now() + .milliseconds(300)) == .success)
}
blocks.addExecutionBlock {
    order.withLock { $0.append("B") }
    blockThreads.withLock { _ = $0.insert(ThreadNames.currentID()) }
    secondStarted.signal()
}
blocks.addExecutionBlock {
    order.withLock { $0.append("C") }
    blockThreads.withLock { _ = $0.insert(ThreadNames.currentID()) }
}
blocks.start()
Report.say("Three execution blocks; the first waits up to 300 ms for the second to start: saw it = \(firstSawSecond.value ?? false);"
    + " order \(order.value.joined(separator: ", ")); threads: \(blockThreads.value.map(ThreadNames.label(of:)).sorted().joined(separator: ", ")).")
Report.linux("swift-corelibs-foundation runs a BlockOperation's extra execution blocks one after another on the thread that"
    + " started it; Darwin runs them concurrently. For concurrency on Linux, make one operation per block.")
Report.check(16, firstSawSecond.value == false && order.value == ["A", "B", "C"] && blockThreads.value == [getpid()],
             "(Linux differs) the extra execution blocks ran in order, on one thread, not concurrently")

// MARK: Claim 17

Report.section("A dependency, queued together (claim 17)")
let engine = TransferEngine(scheduler: DispatchScheduler(label: "example.batch"))
let log = Shared<[String]>([])
let request = RequestOperation(request: TransferRequest(url: server.url(.delay(300))), engine: engine)
request.setCompletionHandlers(success: { _, _ in log.withLock { $0.append("request's success handler ran") } }, failure: nil)
let dependant = BlockOperation { [request] in
    log.withLock { $0.append("dependant ran, request finished = \(request.isFinished)") }
}
dependant.addDependency(request)
let free = BlockOperation { log.withLock { $0.append("free operation ran") } }
let groupQueue = OperationQueue()
groupQueue.maxConcurrentOperationCount = 4
groupQueue.addOperations([dependant, request, free], waitUntilFinished: true)
Waiting.until { log.value.count == 3 }
for line in log.value { Report.say(line) }
Report.say("(A dependency waits for the operation to finish, not for its success handler, which runs on the completion queue.)")
Report.check(17, log.value.contains("dependant ran, request finished = true") && log.value.contains("free operation ran"),
             "the dependant, added first, waited for its dependency although the queue had room; the free operation did not wait")
Report.linux("a dependant must outlive its dependencies: Foundation on Linux keeps an unretained pointer back to it, and a"
    + " dependant released early crashes the process when the dependency finishes. Keep it (a queue does) until then.")

// MARK: Claim 18

Report.section("A dispatch group's notify (claim 18)")
let groupLog = Shared<[String]>([])
let tasks = DispatchQueue(label: "example.tasks", attributes: .concurrent)
let group = DispatchGroup()
tasks.suspend()  // every task is submitted before any runs
tasks.async(group: group) { groupLog.withLock { $0.append("A") } }
tasks.async(group: group) { groupLog.withLock { $0.append("B") } }
let notified = DispatchSemaphore(value: 0)
group.notify(queue: .global()) {
    groupLog.withLock { $0.append("notify") }
    notified.signal()
}
tasks.async(group: group) { groupLog.withLock { $0.append("C (joined after notify was registered)") } }
tasks.resume()
_ = Waiting.wait(for: notified)
Report.say("Order: \(groupLog.value.joined(separator: ", ")).")
let emptyNotified = DispatchSemaphore(value: 0)
DispatchGroup().notify(queue: .global()) { emptyNotified.signal() }
let emptyAtOnce = Waiting.wait(for: emptyNotified, timeout: .seconds(5))
Report.say("An empty group notifies at once: \(emptyAtOnce).")
Report.check(18, groupLog.value.count == 4 && groupLog.value.last == "notify" && emptyAtOnce,
             "a group's notify runs after every task has left the group, also one that joined after notify was registered")

// MARK: Claim 19

Report.section("A batch of three requests: completion order (claim 19)")
let batchLog = Shared<[String]>([])
let routes: [(String, Route)] = [("/delay/300", .delay(300)), ("/bytes/10", .bytes(10)),
                                 ("/close-mid-body/1000 (fails)", .closeMidBody(bytes: 1_000))]
let members = routes.map { name, route in
    let operation = RequestOperation(request: TransferRequest(url: server.url(route)), engine: engine)
    operation.setCompletionHandlers(success: { _, _ in batchLog.withLock { $0.append("handler: \(name) succeeded") } },
                                    failure: { _, _ in batchLog.withLock { $0.append("handler: \(name) failed") } })
    return operation
}
let completed = DispatchSemaphore(value: 0)
let batch = OperationBatch(of: members, progress: { finished, total in
    batchLog.withLock { $0.append("progress \(finished)/\(total)") }
}, completion: { operations in
    batchLog.withLock { $0.append("batch completion, \(operations.count) operations") }
    completed.signal()
})
let batchQueue = OperationQueue()
for operation in batch.operations { batchQueue.addOperation(operation) }
_ = Waiting.wait(for: completed)
let entries = batchLog.value
for entry in entries { Report.say(entry) }
let progressAfterHandlers = (1...3).allSatisfy { count in
    guard let index = entries.firstIndex(of: "progress \(count)/3") else { return false }
    return entries[..<index].filter { $0.hasPrefix("handler") }.count >= count
}
let emptyDone = DispatchSemaphore(value: 0)
let emptyCount = Shared<Int?>(nil)
let empty = OperationBatch(of: [], completion: { operations in
    emptyCount.set(operations.count)
    emptyDone.signal()
})
for operation in empty.operations { batchQueue.addOperation(operation) }
let emptyCompleted = Waiting.wait(for: emptyDone, timeout: .seconds(10))
Report.say("An empty batch: completion called = \(emptyCompleted), with \(emptyCount.value.map(String.init) ?? "no") operations.")
Report.check(19, entries.filter { $0.hasPrefix("progress") } == ["progress 1/3", "progress 2/3", "progress 3/3"]
             && progressAfterHandlers && entries.last == "batch completion, 3 operations" && entries.count == 7
             && emptyCompleted && emptyCount.value == 0,
             "each member's handler, then its progress; the batch completion after every handler, a failing member included; an empty batch still completes")
engine.shutDownAndWait()
Report.finish()
