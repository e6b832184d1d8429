import CurlewTransport

/// What a ``RunLoopScheduler`` needs from one way of watching sockets on its run loop.
///
/// Implemented by ``CFSocketWatcher`` and ``EpollSourceWatcher``, one per
/// ``RunLoopScheduler/SocketStrategy`` case, as the dispatch backend's watchers are. Every method is
/// called on the network thread only, and every event goes to the shared ``HandlerSlot`` on that
/// thread.
protocol SocketWatcher: AnyObject {
    /// Watches `socket` for exactly `interest`; an empty interest disarms but keeps the watch.
    func setInterest(_ interest: SocketInterest, for socket: Int32)

    /// Stops watching `socket` and closes it (at once: no event of a dropped watch can be delivered
    /// afterwards). A socket that was never watched is closed too.
    func close(socket: Int32)

    /// Whether `socket` is watched with at least one direction armed.
    func isArmed(_ socket: Int32) -> Bool

    /// Sockets with a watch, armed or not.
    var watchedCount: Int { get }

    /// Sockets with at least one armed direction.
    var armedCount: Int { get }

    /// Drops every watch, closes every watched socket and removes everything from the run loop.
    func tearDown()
}

/// The handler a scheduler is bound to, shared by its socket watcher and timer.
///
/// Confined to the network thread: written by `bind` (through a perform) and by `shutdown`, read by
/// the callouts, all on that thread.
final class HandlerSlot {
    var handler: (any TransferSchedulerEventHandler)?
}
