import CurlewTransport

/// A request's progress for any number of async readers: each ``stream()`` is an `AsyncStream` that
/// keeps the newest value only, fed through a ``ProgressRelay`` (off the network context, coalesced),
/// and finished once the request is, after its last value.
///
/// Until someone reads, a report is one store under the lock: the relay is made for the first reader.
/// Every report to the relay is made with the lock held, so the relay hears them in order and a reader
/// never sees the counts go back.
///
/// Safety: `@unchecked Sendable` because every property is read and written only with `lock` held.
final class ProgressStreams: @unchecked Sendable {
    private typealias Continuation = AsyncStream<TransferProgress>.Continuation

    private let lock = PThreadMutex()
    @exclusivity(unchecked) private var latest: TransferProgress?
    @exclusivity(unchecked) private var relay: ProgressRelay?
    @exclusivity(unchecked) private var readers: [Int: Continuation] = [:]
    @exclusivity(unchecked) private var nextReader = 0
    @exclusivity(unchecked) private var isFinished = false

    deinit {
        self.lock.deallocate()
    }

    /// Takes a report from the transfer (on the network context).
    func report(_ progress: TransferProgress) {
        self.lock.withLock {
            self.latest = progress
            self.relay?.report(progress)
        }
    }

    /// A new reader's stream: the latest value so far, then newer ones; it ends when the request has
    /// ended (at once, after the last value, if it has).
    func stream() -> AsyncStream<TransferProgress> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let ended = self.lock.withLock { () -> TransferProgress?? in
                guard !self.isFinished else { return .some(self.latest) }
                let key = self.nextReader
                self.nextReader += 1
                self.readers[key] = continuation
                continuation.onTermination = { [weak self] _ in self?.remove(key) }
                if self.relay == nil {
                    self.relay = ProgressRelay { [weak self] progress in self?.deliver(progress) }
                }
                if let latest = self.latest { self.relay?.report(latest) }
                return .none
            }
            guard let ended else { return }
            if let last = ended { continuation.yield(last) }
            continuation.finish()
        }
    }

    /// The request has ended: every reader gets the last value, then the end.
    func finish() async {
        let relay = self.lock.withLock { self.relay }
        await relay?.flush()
        let readers = self.lock.withLock { () -> [Continuation] in
            self.isFinished = true
            defer { self.readers = [:] }
            return Array(self.readers.values)
        }
        for reader in readers { reader.finish() }
    }

    /// On the relay's queue: `progress` to every reader.
    private func deliver(_ progress: TransferProgress) {
        let readers = self.lock.withLock { Array(self.readers.values) }
        for reader in readers { reader.yield(progress) }
    }

    private func remove(_ key: Int) {
        self.lock.withLock { self.readers[key] = nil }
    }
}
