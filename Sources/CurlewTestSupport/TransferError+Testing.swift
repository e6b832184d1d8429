import CurlewTransport
import Foundation

extension TransferError {
    /// Whether this is a cancellation carrying `url` as its failing URL.
    public func isCancellation(of url: URL?) -> Bool {
        self.code == .cancelled && self.failingURL == url
    }
}
