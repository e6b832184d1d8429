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
final class EpollSourceWatch {
    /// Batches of 64 events per handler run; more waiting makes the source fire again.
    private static let maxBatchesPerDrain = 16

    private let sockets: EpollSet
    private let source: any DispatchSourceRead
    private var isCancelled = false

    /// Creates the epoll set and its source, activated; `nil` if the process is out of descriptors.
    ///
    /// - Parameters:
    ///   - deliver: Called on `queue` with each ready socket and its armed directions.
    init?(queue: DispatchQueue, deliver: @escaping (Int32, SocketEvents) -> Void) {
        guard let sockets = EpollSet.make() else { return nil }
        self.sockets = sockets
        self.source = DispatchSource.makeReadSource(fileDescriptor: sockets.descriptor, queue: queue)
        // The handlers (this one, and the cancel handler `cancel(then:)` sets) hold the set, not the
        // watch: the watch may go before its cancel handler runs.
        self.source.setEventHandler {
            sockets.drain(maxBatches: Self.maxBatchesPerDrain, deliver: deliver)
        }
        self.source.activate()
    }

    deinit {
        // Normally cancelled by the scheduler; this keeps a forgotten watch from leaking descriptors.
        self.cancel(then: {})
    }

    /// Sockets with a watch, armed or not.
    var watchedCount: Int { self.sockets.watchedCount }

    /// Sockets with at least one armed direction.
    var armedCount: Int { self.sockets.armedCount }

    /// Watches `socket` for exactly `interest`; `false` when the kernel refused an armed socket.
    func setInterest(_ interest: SocketInterest, for socket: Int32) -> Bool {
        self.sockets.setInterest(interest, for: socket)
    }

    /// Whether `socket` is watched with at least one direction armed.
    func isArmed(_ socket: Int32) -> Bool {
        self.sockets.isArmed(socket)
    }

    /// Stops watching `socket` and closes it at once.
    func close(socket: Int32) {
        self.sockets.close(socket: socket)
    }

    /// Cancels the source; its cancel handler, later on the queue, closes every socket still in the
    /// set and the epoll descriptor, then calls `completion`.
    func cancel(then completion: @escaping () -> Void) {
        guard !self.isCancelled else { return }
        self.isCancelled = true
        self.source.setCancelHandler { [sockets = self.sockets] in
            sockets.closeAll()
            completion()
        }
        self.source.cancel()
    }
}
