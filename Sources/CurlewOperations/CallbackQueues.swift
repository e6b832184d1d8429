import CurlewTransport
import Dispatch
import Foundation

/// Where a ``RequestOperation`` runs its callbacks when it is not told otherwise.
///
/// AFNetworking ran success and failure blocks, progress blocks and notifications on the main
/// queue. A Linux server or command-line tool usually never drains the main queue (its main thread
/// runs no loop, or is busy), so those callbacks would wait forever and pile up. Curlew's default,
/// ``library``, therefore uses queues of its own; ``main`` restores AFNetworking's behaviour for
/// programs whose main queue is drained (`dispatchMain()`, a run loop, an app framework).
///
/// ```swift
/// // Once, early: every operation created afterwards calls back on the main queue.
/// RequestOperation.defaultCallbackQueues = .main
/// ```
///
/// Each operation takes the defaults when it is created; its ``RequestOperation/completionQueue``,
/// ``RequestOperation/notificationQueue`` and ``RequestOperation/progressQueue`` override them.
public struct CallbackQueues: Sendable {
    /// Runs success and failure handlers.
    public var completion: DispatchQueue
    /// Posts did-start, did-pause and did-finish notifications. Keep it serial: a concurrent queue
    /// may post one operation's notifications out of order.
    public var notification: DispatchQueue
    /// Runs upload and download progress handlers (at most one delivery per operation at a time,
    /// whatever the queue).
    public var progress: DispatchQueue

    /// Creates a set of callback queues.
    ///
    /// - Parameters:
    ///   - completion: Runs success and failure handlers.
    ///   - notification: Posts notifications; should be serial.
    ///   - progress: Runs progress handlers.
    public init(completion: DispatchQueue, notification: DispatchQueue, progress: DispatchQueue) {
        self.completion = completion
        self.notification = notification
        self.progress = progress
    }

    /// Curlew's default: handlers and progress on a shared concurrent queue, notifications on a
    /// shared serial queue. Neither is the main queue, so nothing depends on the main thread.
    public static let library = CallbackQueues(
        completion: SharedQueues.callbacks,
        notification: SharedQueues.notifications,
        progress: SharedQueues.callbacks
    )

    /// AFNetworking's choice: everything on the main queue, which must then be drained.
    public static let main = CallbackQueues(completion: .main, notification: .main, progress: .main)
}

/// The library's shared queues.
enum SharedQueues {
    /// The default completion and progress queue.
    static let callbacks = DispatchQueue(label: "curlew.operation.callbacks", attributes: .concurrent)
    /// The default notification queue (serial, so one operation's notifications stay in order).
    static let notifications = DispatchQueue(label: "curlew.operation.notifications")
    /// Where the backoff waits between retries run out (`asyncAfter`): a serial queue that only
    /// hands each due retry back to its operation, so no wait blocks a thread or the network context.
    static let retries = DispatchQueue(label: "curlew.operation.retries")
    /// What ``RequestOperation/defaultCallbackQueues`` currently holds.
    static let defaults = Locked(CallbackQueues.library)
}
