import CurlewTransport
import Dispatch
import Foundation

// Progress: recorded on the network context, delivered elsewhere, coalesced.
//
// The network context records the latest `TransferProgress` under the lock and, if someone listens
// (a handler, or the Foundation `Progress`) and no delivery is queued, queues one on the progress
// queue. A delivery hands the latest value to the handlers and loops until nothing newer arrived.
// So at most one delivery per operation is queued or running, handlers never run concurrently
// with themselves, a slow handler skips intermediate values instead of building a backlog, and
// the last value is always delivered.

extension RequestOperation {
    /// The operation's progress as a Foundation `Progress`, in bytes: request body bytes sent plus
    /// response body bytes received.
    ///
    /// `totalUnitCount` is the expected total once the response's length is known, `-1`
    /// (indeterminate) before or without it; a successful operation ends at a fraction of 1.
    /// Values are updated where progress handlers run (see ``progressQueue``), coalesced in the
    /// same way. Cancelling the `Progress` cancels the operation; pausing and resuming it pauses
    /// and resumes the operation.
    ///
    /// ```swift
    /// parent.addChild(operation.progress, withPendingUnitCount: 1)
    /// ```
    public var progress: Progress {
        self.storage.withLock { state in
            if let existing = state.progress.foundationProgress { return existing }
            let progress = Progress(totalUnitCount: -1)
            progress.isCancellable = true
            progress.isPausable = true
            progress.cancellationHandler = { [weak self] in self?.cancel() }
            progress.pausingHandler = { [weak self] in self?.pause() }
            progress.resumingHandler = { [weak self] in self?.resume() }
            state.progress.foundationProgress = progress
            state.syncFoundationProgress()
            return progress
        }
    }

    /// On the network context: record the latest progress; queue a delivery if one is needed.
    func transferDidUpdate(_ progress: TransferProgress) {
        let queue = self.storage.withLock { state -> DispatchQueue? in
            state.progress.latest = progress
            return state.queueProgressDelivery()
        }
        queue?.async { self.deliverProgress() }
    }

    /// On the progress queue: hand the latest progress to the handlers until nothing newer is left.
    func deliverProgress() {
        while true {
            let job = self.storage.withLock { state -> ProgressJob? in
                let relay = state.progress
                guard relay.latest != relay.delivered else {
                    state.progress.isDeliveryQueued = false
                    if state.machine.isFinished { state.releaseProgressHandlers() }
                    return nil
                }
                state.progress.delivered = relay.latest
                state.syncFoundationProgress()
                return ProgressJob(current: relay.latest, previous: relay.delivered,
                                   upload: state.uploadProgressHandler, download: state.downloadProgressHandler)
            }
            guard let job else { return }
            if job.current.bytesSent != job.previous.bytesSent
                || job.current.expectedBytesToSend != job.previous.expectedBytesToSend {
                job.upload?(job.current)
            }
            if job.current.bytesReceived != job.previous.bytesReceived
                || job.current.expectedBytesToReceive != job.previous.expectedBytesToReceive {
                job.download?(job.current)
            }
        }
    }

    /// One delivery's values and handlers, taken under the lock and used outside it.
    struct ProgressJob {
        var current: TransferProgress
        var previous: TransferProgress
        var upload: (@Sendable (TransferProgress) -> Void)?
        var download: (@Sendable (TransferProgress) -> Void)?
    }

    /// The coalescing state, part of the operation's storage.
    struct ProgressRelay: Sendable {
        /// The latest value the transfer reported.
        var latest = TransferProgress()
        /// The last value handed to the handlers.
        var delivered = TransferProgress()
        /// Whether a delivery is queued or running.
        var isDeliveryQueued = false
        /// The Foundation `Progress`, once someone asked for it.
        var foundationProgress: Progress?
    }
}

extension RequestOperation.Storage {
    /// Whether anything listens to progress.
    private var hasProgressObservers: Bool {
        self.uploadProgressHandler != nil || self.downloadProgressHandler != nil
            || self.progress.foundationProgress != nil
    }

    /// Marks a delivery queued and returns the queue for it, when one is needed and none is queued.
    mutating func queueProgressDelivery() -> DispatchQueue? {
        guard self.hasProgressObservers, !self.progress.isDeliveryQueued,
              self.progress.latest != self.progress.delivered else { return nil }
        self.progress.isDeliveryQueued = true
        return self.progressQueue
    }

    /// At the finish: the final values for the `Progress`, and a last delivery if one is owed;
    /// when none is, the progress handlers are released now (else the delivery releases them).
    mutating func progressAfterFinish() -> DispatchQueue? {
        self.syncFoundationProgress()
        if let queue = self.queueProgressDelivery() { return queue }
        if !self.progress.isDeliveryQueued { self.releaseProgressHandlers() }
        return nil
    }

    /// Drops the progress handlers (they may capture the operation).
    mutating func releaseProgressHandlers() {
        self.uploadProgressHandler = nil
        self.downloadProgressHandler = nil
    }

    /// Writes the latest values into the Foundation `Progress`, if there is one. `Progress`'s
    /// setters take only its own lock and call no handler, so this is safe under ours.
    func syncFoundationProgress() {
        guard let progress = self.progress.foundationProgress else { return }
        let latest = self.progress.latest
        let completed = latest.bytesSent + latest.bytesReceived
        let total: Int64
        if case .success = self.result {
            total = max(completed, 1)
            progress.totalUnitCount = total
            progress.completedUnitCount = total
            return
        }
        if let expected = latest.expectedBytesToReceive {
            total = (latest.expectedBytesToSend ?? 0) + expected
        } else {
            total = -1
        }
        progress.totalUnitCount = total
        progress.completedUnitCount = completed
    }
}
