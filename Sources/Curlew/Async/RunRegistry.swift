import CurlewTransport
import Foundation

/// The async requests a manager has in flight, so that ``RequestOperationManager/shutdown()`` can
/// cancel them (or ``RequestOperationManager/shutdownGracefully()`` let them finish) and wait until
/// each has ended; after the shutdown, no request starts.
///
/// Runs sit in numbered slots (a run knows its own), so keeping and letting go of one is a store and
/// a free-list push, with no hashing.
///
/// Safety: `@unchecked Sendable` because every property — and each run's ``RequestRun/registrySlot``
/// — is read and written only with `lock` held.
final class RunRegistry: @unchecked Sendable {
    private let lock = PThreadMutex()
    @exclusivity(unchecked) private var slots: [RequestRun?] = []
    @exclusivity(unchecked) private var freeSlots: [Int] = []
    @exclusivity(unchecked) private var count = 0
    @exclusivity(unchecked) private var isShutDown = false
    @exclusivity(unchecked) private var drained: [CheckedContinuation<Void, Never>] = []

    deinit {
        self.lock.deallocate()
    }

    /// Keeps `run` until ``remove(_:)``; `false` (and nothing kept) once the manager is shut down.
    func insert(_ run: RequestRun) -> Bool {
        self.lock.withLock {
            guard !self.isShutDown else { return false }
            let slot: Int
            if let free = self.freeSlots.popLast() {
                slot = free
                self.slots[slot] = run
            } else {
                slot = self.slots.count
                self.slots.append(run)
            }
            run.registrySlot = slot
            self.count += 1
            return true
        }
    }

    /// Lets `run` go (nothing when it is not kept).
    func remove(_ run: RequestRun) {
        let waiters = self.lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            let slot = run.registrySlot
            guard slot >= 0, slot < self.slots.count, self.slots[slot] === run else { return [] }
            self.slots[slot] = nil
            self.freeSlots.append(slot)
            run.registrySlot = -1
            self.count -= 1
            guard self.count == 0, !self.drained.isEmpty else { return [] }
            defer { self.drained = [] }
            return self.drained
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Refuses new runs, cancels those in flight and returns once every one has ended.
    func shutDown() async {
        self.cancelAll()
        await self.drain()
    }

    /// Refuses new runs and cancels those in flight.
    func cancelAll() {
        let running = self.lock.withLock { () -> [RequestRun] in
            self.isShutDown = true
            return self.slots.compactMap { $0 }
        }
        for run in running { run.cancel() }
    }

    /// Refuses new runs and returns once every one in flight has ended, as it would have.
    func drain() async {
        self.lock.withLock { self.isShutDown = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = self.lock.withLock { () -> Bool in
                guard self.count > 0 else { return true }
                self.drained.append(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
    }
}
