import CurlewTransport
import Foundation

/// The async requests a manager has in flight, so that ``RequestOperationManager/shutdown()`` can
/// cancel them and wait until each has ended; after the shutdown, no request starts.
///
/// Safety: `@unchecked Sendable` because every property is read and written only with `lock` held.
final class RunRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var runs: [ObjectIdentifier: RequestRun] = [:]
    private var isShutDown = false
    private var drained: [CheckedContinuation<Void, Never>] = []

    /// Keeps `run` until ``remove(_:)``; `false` (and nothing kept) once the manager is shut down.
    func insert(_ run: RequestRun) -> Bool {
        self.lock.withLock {
            guard !self.isShutDown else { return false }
            self.runs[ObjectIdentifier(run)] = run
            return true
        }
    }

    func remove(_ run: RequestRun) {
        let waiters = self.lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            self.runs[ObjectIdentifier(run)] = nil
            guard self.runs.isEmpty, !self.drained.isEmpty else { return [] }
            defer { self.drained = [] }
            return self.drained
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Refuses new runs, cancels those in flight and returns once every one has ended.
    func shutDown() async {
        let running = self.lock.withLock { () -> [RequestRun] in
            self.isShutDown = true
            return Array(self.runs.values)
        }
        for run in running { run.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = self.lock.withLock { () -> Bool in
                guard !self.runs.isEmpty else { return true }
                self.drained.append(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
    }
}
