import CurlewTransport
import Dispatch

/// The ``DispatchScheduler/SocketStrategy/epollSource`` strategy: one ``EpollSet`` holding the
/// scheduler's sockets, and one dispatch read source on its descriptor.
///
/// libdispatch registers a read source level-triggered and one-shot (`EPOLLIN | EPOLLONESHOT`), and
/// re-arms it when the handler has run: readiness left after a drain (a full last batch, or a
/// socket curl did not read to the end) makes the source fire again, so no re-check is needed,
/// unlike CF's edge-triggered run-loop ports.
///
/// The epoll descriptor is registered with libdispatch, so it is closed only by the source's cancel
/// handler (the rule ``DeferredCloses`` keeps for sockets); the sockets in it are not, and are
/// closed at once.
///
/// Confined to the scheduler's queue.
final class EpollSourceWatcher: SocketWatcher {
    /// Batches of 64 events per handler run; more waiting makes the source fire again.
    private static let maxBatchesPerDrain = 16

    private let sockets: EpollSet
    private let source: any DispatchSourceRead
    private let reportFailure: (Int32) -> Void
    private var isCancelled = false

    /// Creates the epoll set and its source, activated; `nil` if the process is out of descriptors.
    ///
    /// - Parameters:
    ///   - slot: Receives each ready socket and its armed directions, on `queue`.
    ///   - reportFailure: Called (on the queue) with a socket the kernel refused to watch; the
    ///     scheduler then reports an error for it later, never from inside `setInterest`.
    static func make(
        queue: DispatchQueue, slot: HandlerSlot, reportFailure: @escaping (Int32) -> Void
    ) -> EpollSourceWatcher? {
        guard let sockets = EpollSet.make() else { return nil }
        return EpollSourceWatcher(sockets: sockets, queue: queue, slot: slot, reportFailure: reportFailure)
    }

    private init(sockets: EpollSet, queue: DispatchQueue, slot: HandlerSlot, reportFailure: @escaping (Int32) -> Void) {
        self.sockets = sockets
        self.reportFailure = reportFailure
        self.source = DispatchSource.makeReadSource(fileDescriptor: sockets.descriptor, queue: queue)
        // The handlers (this one, and the cancel handler `tearDown(then:)` sets) hold the set and the
        // slot, not the watcher: the watcher may go before its cancel handler runs.
        self.source.setEventHandler {
            sockets.drain(maxBatches: Self.maxBatchesPerDrain) { socket, events in
                slot.handler?.socketBecameReady(socket, events: events)
            }
        }
        self.source.activate()
    }

    deinit {
        // Normally torn down by the scheduler; this keeps a forgotten watcher from leaking descriptors.
        self.tearDown(then: {})
    }

    // MARK: SocketWatcher

    var watchedCount: Int { self.sockets.watchedCount }

    var armedCount: Int { self.sockets.armedCount }

    /// Always 0: the sockets are closed at once.
    var pendingCloses: Int { 0 }

    func setInterest(_ interest: SocketInterest, for socket: Int32) {
        if !self.sockets.setInterest(interest, for: socket) { self.reportFailure(socket) }
    }

    func isArmed(_ socket: Int32) -> Bool {
        self.sockets.isArmed(socket)
    }

    func close(socket: Int32) {
        self.sockets.close(socket: socket)
    }

    /// Cancels the source; its cancel handler, later on the queue, closes every socket still in the
    /// set and the epoll descriptor, then calls `completion`. A socket closed meanwhile leaves the set
    /// at once instead of being closed a second time.
    func tearDown(then completion: @escaping () -> Void) {
        guard !self.isCancelled else { return }
        self.isCancelled = true
        self.source.setCancelHandler { [sockets = self.sockets] in
            sockets.closeAll()
            completion()
        }
        self.source.cancel()
    }
}
