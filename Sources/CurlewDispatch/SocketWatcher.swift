import CurlewTransport

/// What a ``DispatchScheduler`` needs from one way of watching sockets on its queue.
///
/// Implemented by ``SourcePerSocketWatcher`` and ``EpollSourceWatcher``, one per
/// ``DispatchScheduler/SocketStrategy`` case, as the run-loop backend's watchers are. Every method is
/// called on the scheduler's queue only, and every event goes to the shared ``HandlerSlot`` there.
protocol SocketWatcher: AnyObject {
    /// Watches `socket` for exactly `interest`; an empty interest disarms but keeps the watch.
    func setInterest(_ interest: SocketInterest, for socket: Int32)

    /// Stops watching `socket` and closes it, once libdispatch holds no state for it any more (at
    /// once, or in the last cancel handler of its sources). A socket that was never watched is closed
    /// at once; a repeated close while the first is pending is ignored.
    func close(socket: Int32)

    /// Whether `socket` is watched with at least one direction armed.
    func isArmed(_ socket: Int32) -> Bool

    /// Sockets with a watch, armed or not.
    var watchedCount: Int { get }

    /// Sockets with at least one armed direction.
    var armedCount: Int { get }

    /// Sockets whose close waits for cancel handlers.
    var pendingCloses: Int { get }

    /// Drops every watch and closes every watched socket; `completion` runs on the queue once every
    /// descriptor is closed. Closes requested meanwhile are still honoured.
    func tearDown(then completion: @escaping () -> Void)
}

/// The handler a scheduler is bound to, shared by its socket watcher and timer.
///
/// Written by `bind` before any work reaches the queue and by the end of `shutdown` on the queue;
/// read by the event handlers, which run on the queue.
final class HandlerSlot {
    var handler: (any TransferSchedulerEventHandler)?
}
