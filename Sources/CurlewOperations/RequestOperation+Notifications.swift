import Dispatch
import Foundation

extension RequestOperation {
    /// Posted when an operation has started its transfer (AFNetworking's
    /// `AFNetworkingOperationDidStartNotification`). The object is the operation.
    ///
    /// Notifications are posted to `NotificationCenter.default` from the operation's
    /// ``notificationQueue``, so observers run there:
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(
    ///     forName: RequestOperation.didFinishNotification, object: nil, queue: nil
    /// ) { note in
    ///     print("finished:", note.object as? RequestOperation as Any)
    /// }
    /// ```
    public static let didStartNotification = Notification.Name("CurlewRequestOperationDidStart")

    /// Posted when an operation has finished (successfully, with an error, or cancelled), after
    /// its `isFinished` change was posted. The object is the operation.
    public static let didFinishNotification = Notification.Name("CurlewRequestOperationDidFinish")

    /// Posted when an operation has paused. The object is the operation. (AFNetworking posted
    /// did-finish on pause; a distinct name says what happened.)
    public static let didPauseNotification = Notification.Name("CurlewRequestOperationDidPause")

    /// Queues the posting of `name`, with this operation as the object, on `queue`.
    func enqueue(_ name: Notification.Name, on queue: DispatchQueue) {
        queue.async {
            NotificationCenter.default.post(name: name, object: self)
        }
    }
}
