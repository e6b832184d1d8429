// bench-floor: the machinery the operation path stands on, measured alone, so that a count of
// instructions or system calls per request can be split into Curlew's own work and its floor.
//
//   bench-floor dispatch-hop N       N hand-offs between two serial queues (each one wakes a thread)
//   bench-floor operation-queue N    N trivial BlockOperations through one OperationQueue, 16 at a time
//   bench-floor notification N       N NotificationCenter posts nobody observes
//   bench-floor operation-layer N [W]  N RequestOperations, 16 at a time, over a transport without I/O
//                                    whose one serial context works W µs per transfer (0 by default)
//                                    before answering (OperationLayer.swift); prints requests/s, CPU
//                                    and context switches per request
//   bench-floor operation-layer-one-queue N [W]  the same, handlers and notifications on one serial queue
//   bench-floor instant-transport N [W [H]]  the same loop on that transport, without operations; each
//                                    completion passes through H serial queues (0 by default) before
//                                    the next transfer starts
//
// The last three take `--in-flight C` first (16 by default): with 1, nothing overlaps, so every
// hand-off wakes a sleeping thread and the figures are the latency of the chain, as at C=1.
//
// Count it twice and difference, as `curlew-bench counts` does, e.g.:
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null .build/release/bench-floor operation-queue 10000
//   strace -f -c -o /tmp/a .build/release/bench-floor operation-queue 10000
import CurlewOperations
import Dispatch
import Foundation

/// A token passed back and forth between two serial queues until its count runs out.
final class Token: @unchecked Sendable {
    // Safety: `left` is touched by one block at a time — the token is on one queue only, and each
    // hand-off (`async`) orders the next block after the previous one.
    private var left: Int
    private let queues: (DispatchQueue, DispatchQueue)
    private let done = DispatchSemaphore(value: 0)

    init(hops: Int) {
        self.left = hops
        self.queues = (DispatchQueue(label: "floor.ping"), DispatchQueue(label: "floor.pong"))
    }

    /// Starts on the first queue and waits until the last hop.
    func run() {
        self.hop(to: self.queues.0)
        self.done.wait()
    }

    private func hop(to queue: DispatchQueue) {
        queue.async {
            self.left -= 1
            if self.left <= 0 {
                self.done.signal()
            } else {
                self.hop(to: queue === self.queues.0 ? self.queues.1 : self.queues.0)
            }
        }
    }
}

/// `count` hand-offs between two serial queues, each waking the other queue's thread.
func dispatchHops(_ count: Int) {
    Token(hops: count).run()
}

/// Runs `count` empty BlockOperations on one OperationQueue, keeping 16 queued at a time as a
/// client with 16 requests in flight does.
func operationQueue(_ count: Int) {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 16
    let slots = DispatchSemaphore(value: 16)
    for _ in 0..<count {
        slots.wait()
        queue.addOperation { slots.signal() }
    }
    queue.waitUntilAllOperationsAreFinished()
}

/// Posts `count` notifications that nobody observes.
func notifications(_ count: Int) {
    let name = Notification.Name("floor.unobserved")
    let object = NSObject()
    for _ in 0..<count {
        NotificationCenter.default.post(name: name, object: object)
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: bench-floor dispatch-hop|operation-queue|notification N
           bench-floor [--in-flight C] operation-layer|operation-layer-one-queue N [WORK-µs]
           bench-floor [--in-flight C] instant-transport N [WORK-µs [HAND-OFFS]]

    """
var inFlight = 16
if arguments.first == "--in-flight" {
    guard arguments.count >= 2, let value = Int(arguments[1]), value > 0 else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
    inFlight = value
    arguments.removeFirst(2)
}
guard (2...4).contains(arguments.count), let count = Int(arguments[1]), count > 0,
    let work = arguments.count >= 3 ? Int(arguments[2]) : 0, work >= 0,
    let handoffs = arguments.count == 4 ? Int(arguments[3]) : 0, handoffs >= 0,
    handoffs == 0 || arguments[0] == "instant-transport"
else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
switch arguments[0] {
case "dispatch-hop": dispatchHops(count)
case "operation-queue": operationQueue(count)
case "notification": notifications(count)
case "operation-layer": operationLayer(count, inFlight: inFlight, work: work, callbackQueues: .library)
case "operation-layer-one-queue":
    let callbacks = DispatchQueue(label: "floor.callbacks")
    operationLayer(
        count, inFlight: inFlight, work: work,
        callbackQueues: CallbackQueues(completion: callbacks, notification: callbacks, progress: callbacks))
case "instant-transport": instantTransport(count, inFlight: inFlight, work: work, handoffs: handoffs)
default:
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
