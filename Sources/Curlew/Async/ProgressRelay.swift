import CurlewTransport
import Dispatch
import Foundation

/// Carries a transfer's progress from the network context to a caller's handler, off that context
/// and coalesced: the handler sees the latest value, on a serial queue of the library's, never
/// several reports at once and never a slow handler holding up the engine.
///
/// Safety: `@unchecked Sendable` because `latest` and `isScheduled` are read and written only with
/// `lock` held; `handler` and `queue` are immutable.
final class ProgressRelay: @unchecked Sendable {
    private let handler: @Sendable (TransferProgress) -> Void
    private let lock = PThreadMutex()
    @exclusivity(unchecked) private var latest = TransferProgress()
    @exclusivity(unchecked) private var isScheduled = false
    private static let queue = DispatchQueue(label: "curlew.manager.progress")

    init(_ handler: @escaping @Sendable (TransferProgress) -> Void) {
        self.handler = handler
    }

    deinit {
        self.lock.deallocate()
    }

    /// Takes `progress`; the handler hears it (or a later one) soon.
    func report(_ progress: TransferProgress) {
        let schedules = self.lock.withLock { () -> Bool in
            self.latest = progress
            defer { self.isScheduled = true }
            return !self.isScheduled
        }
        guard schedules else { return }
        Self.queue.async {
            let progress = self.lock.withLock { () -> TransferProgress in
                self.isScheduled = false
                return self.latest
            }
            self.handler(progress)
        }
    }

    /// Waits until every report made so far has reached the handler.
    func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Self.queue.async { continuation.resume() }
        }
    }
}
