import Foundation
import HTTPTypes

/// Receives one transfer's events, **on the engine's context** (the network thread or the
/// dispatch scheduler's queue).
///
/// Keep these methods short and never block in them: every transfer of the engine waits while one
/// runs. Hand work elsewhere (a processing queue) instead. They may call ``Transfer``'s methods,
/// which never re-enter curl synchronously.
///
/// Only ``transfer(_:didCompleteWith:)`` is required; it is called exactly once per transfer.
public protocol TransferDelegate: AnyObject, Sendable {
    /// The head of the response that will be delivered arrived (redirect responses are not
    /// reported). Called again if a resumed transfer had to restart with a different response.
    func transfer(_ transfer: Transfer, didReceive response: HTTPResponse)

    /// Body bytes moved in either direction.
    func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress)

    /// A redirect is about to be followed to `request`. Return it (or a changed copy) to follow, or
    /// `nil` to stop and deliver the redirect response itself.
    func transfer(_ transfer: Transfer, willRedirect response: HTTPResponse, to request: HTTPRequest) -> HTTPRequest?

    /// The transfer paused (``Transfer/pause()``): its connection is released, its body so far kept.
    func transferDidPause(_ transfer: Transfer)

    /// The transfer finished: with a complete response, or with an error. Called exactly once.
    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>)
}

extension TransferDelegate {
    public func transfer(_ transfer: Transfer, didReceive response: HTTPResponse) {}
    public func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) {}
    public func transfer(_ transfer: Transfer, willRedirect response: HTTPResponse, to request: HTTPRequest) -> HTTPRequest? {
        request
    }
    public func transferDidPause(_ transfer: Transfer) {}
}
