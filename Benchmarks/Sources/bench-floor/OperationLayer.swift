// The operation layer alone: real `RequestOperation`s on an `OperationQueue`, over a transport that
// answers at once, so that no socket, curl or server takes part. What a request costs here is what
// AFNetworking's design costs on top of any engine: the queue, the hand-offs, the notifications.
import BenchKit
import CurlewOperations
import CurlewTransport
import Dispatch
import Foundation
import HTTPTypes

/// A transport that answers every started transfer with the same small 200 response, on one serial
/// queue of its own: the stand-in for the engine's network context. With `work` it first spins that
/// many microseconds per transfer, as the engine's thread spends on curl and the sockets, so that the
/// context is busy and the operation layer's threads wait for it as they do over a real network.
final class InstantTransport: TransferRunning, Sendable {
    let context = DispatchQueue(label: "floor.instant-transport")
    let response: TransferResponse
    let work: UInt64

    init(work microseconds: Int) {
        self.work = UInt64(microseconds) * 1_000
        let url = URL(fileURLWithPath: "/")
        self.response = TransferResponse(
            head: HTTPResponse(status: .ok), body: Data(count: 13), fileURL: nil, url: url, metrics: TransferMetrics())
    }

    func makeTransfer(_ request: TransferRequest, observer: any TransferObserver) -> any TransferControl {
        InstantTransfer(transport: self, observer: observer)
    }

    /// Behind the transfers already queued, as the engine does (only called from a completion).
    func afterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        self.context.async(execute: work)
    }
}

/// One transfer of ``InstantTransport``: completes on the transport's queue once started.
final class InstantTransfer: TransferControl, @unchecked Sendable {
    // Safety: `started` is only read and written on `transport.context` (start hops there first).
    private var started = false
    private let transport: InstantTransport
    private let observer: any TransferObserver

    init(transport: InstantTransport, observer: any TransferObserver) {
        self.transport = transport
        self.observer = observer
    }

    func start() {
        self.transport.context.async {
            guard !self.started else { return }
            self.started = true
            let until = MonotonicClock.nanoseconds() + self.transport.work
            while MonotonicClock.nanoseconds() < until {}
            self.observer.transferDidComplete(with: .success(self.transport.response))
        }
    }

    // A transfer completes as soon as it starts, so there is nothing to cancel or pause.
    func cancel() {}
    func pause() {}
    func resume() {}
}

/// A closed loop of `count` operations, `inFlight` at a time, each refilled from the completion
/// handler of the one before, as `bench-curlew`'s operation clients do. Prints one line: requests
/// per second, and per request CPU (user + system) and context switches of the whole process.
func operationLayer(_ count: Int, inFlight: Int, work: Int, callbackQueues: CallbackQueues) {
    RequestOperation.defaultCallbackQueues = callbackQueues
    let transport = InstantTransport(work: work)
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = inFlight
    guard let url = URL(string: "http://127.0.0.1/small") else { return }
    let request = TransferRequest(url: url)
    let loop = ClosedLoopCount(count)

    @Sendable func next() {
        guard loop.take() else { return }
        let operation = RequestOperation(request: request, transport: transport)
        operation.setCompletionHandlers(
            success: { _, _ in next() },
            failure: { _, error in
                FileHandle.standardError.write(Data("failed: \(error)\n".utf8))
                exit(1)
            })
        queue.addOperation(operation)
    }
    measure(count) {
        for _ in 0..<inFlight { next() }
        loop.waitUntilDone(inFlight: inFlight)
    }
}

/// The same loop straight on the transport, without operations: each completion passes through
/// `handoffs` serial queues, one after another, before the next transfer starts (0: it starts on the
/// transport's context at once, as the engine clients do). Each hand-off is what every hop of the
/// operation path is: a block queued onto another queue, whose thread may have to be woken.
func instantTransport(_ count: Int, inFlight: Int, work: Int, handoffs: Int) {
    let transport = InstantTransport(work: work)
    guard let url = URL(string: "http://127.0.0.1/small") else { return }
    let request = TransferRequest(url: url)
    let loop = ClosedLoopCount(count)
    let queues = (0..<handoffs).map { DispatchQueue(label: "floor.handoff.\($0)") }

    final class Observer: TransferObserver {
        let ended: @Sendable () -> Void
        init(ended: @escaping @Sendable () -> Void) { self.ended = ended }
        func transferDidUpdate(_ progress: TransferProgress) {}
        func transferDidComplete(with result: Result<TransferResponse, TransferError>) { self.ended() }
    }
    @Sendable func handOff(from index: Int) {
        guard index < queues.count else { return next() }
        queues[index].async { handOff(from: index + 1) }
    }
    @Sendable func next() {
        guard loop.take() else { return }
        transport.makeTransfer(request, observer: Observer(ended: { handOff(from: 0) })).start()
    }
    measure(count) {
        for _ in 0..<inFlight { next() }
        loop.waitUntilDone(inFlight: inFlight)
    }
}

/// Counts the requests a closed loop may still start, and wakes the waiter when all have ended.
final class ClosedLoopCount: @unchecked Sendable {
    // Safety: `left` is guarded by `lock`.
    private let lock = NSLock()
    private var left: Int
    private let ended = DispatchSemaphore(value: 0)

    init(_ count: Int) { self.left = count }

    /// Takes one request; `false` when all were taken, and then the caller's slot has ended.
    func take() -> Bool {
        self.lock.lock()
        defer { self.lock.unlock() }
        guard self.left > 0 else {
            self.ended.signal()
            return false
        }
        self.left -= 1
        return true
    }

    /// Waits until every slot found nothing left to take.
    func waitUntilDone(inFlight: Int) {
        for _ in 0..<inFlight { self.ended.wait() }
    }
}

/// Runs `body` and prints what `count` requests cost in it.
func measure(_ count: Int, _ body: () -> Void) {
    let before = ResourceUsage.process()
    let start = MonotonicClock.nanoseconds()
    body()
    let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
    let used = ResourceUsage.process().since(before)
    let n = Double(count)
    let cpu = Double(used.userMicros + used.systemMicros) / n
    let voluntary = Double(used.voluntaryContextSwitches) / n
    let involuntary = Double(used.involuntaryContextSwitches) / n
    print(String(
        format: "%.0f requests/s, %.1f µs CPU, %.2f voluntary and %.2f involuntary context switches per request",
        n / seconds, cpu, voluntary, involuntary))
}
