// bench-floor: the machinery the operation path stands on, measured alone, so that a count of
// instructions or system calls per request can be split into Curlew's own work and its floor.
//
//   bench-floor dispatch-hop N       N hand-offs between two serial queues (each one wakes a thread)
//   bench-floor operation-queue N    N trivial BlockOperations through one OperationQueue, 16 at a time
//   bench-floor notification N       N NotificationCenter posts nobody observes
//
// Count it twice and difference, as `curlew-bench counts` does, e.g.:
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null .build/release/bench-floor operation-queue 10000
//   strace -f -c -o /tmp/a .build/release/bench-floor operation-queue 10000
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

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let what = arguments.first, let count = arguments.last.flatMap({ Int($0) }), count > 0 else {
    FileHandle.standardError.write(Data("usage: bench-floor dispatch-hop|operation-queue|notification N\n".utf8))
    exit(2)
}
switch what {
case "dispatch-hop": dispatchHops(count)
case "operation-queue": operationQueue(count)
case "notification": notifications(count)
default:
    FileHandle.standardError.write(Data("unknown measurement \(what)\n".utf8))
    exit(2)
}
