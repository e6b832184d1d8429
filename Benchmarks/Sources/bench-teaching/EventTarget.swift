import CurlewTransport

/// Where a ``LoopScheduler``'s socket watches and timer deliver their events: the bound engine.
///
/// Confined to the scheduler's run-loop thread (set by `bind`/`shutdown`, read by the callouts).
final class EventTarget {
    var handler: (any TransferSchedulerEventHandler)?
}
