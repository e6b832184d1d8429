@_exported import CurlewBatching
@_exported import CurlewDispatch
@_exported import CurlewOperations
@_exported import CurlewRunLoop
@_exported import CurlewSerialization
@_exported import CurlewTransport
@_exported import Foundation
@_exported import HTTPTypes
#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif

/// The engine that ``CurlewOperations/RequestOperation/init(request:)`` uses: one process-wide
/// `TransferEngine` on a `DispatchScheduler` (GCD-first: a serial queue, no thread of its own),
/// created on first use and never shut down.
///
/// Write it `Curlew.defaultEngine`. Use your own engine instead when you want another scheduler
/// (`RunLoopScheduler` for the classic network thread), other connection limits, or to shut it
/// down:
///
/// ```swift
/// import Curlew
///
/// let operation = RequestOperation(request: TransferRequest(url: url))   // Curlew.defaultEngine
/// let engine = TransferEngine(scheduler: RunLoopScheduler())
/// let classic = RequestOperation(request: TransferRequest(url: url), engine: engine)
/// ```
public let defaultEngine = TransferEngine(scheduler: DispatchScheduler(label: "curlew.default-engine"))

extension RequestOperation {
    /// Creates an operation for `request` on ``Curlew/defaultEngine``.
    ///
    /// - Parameter request: What to send, where the body goes, and the transfer options.
    public convenience init(request: TransferRequest) {
        self.init(request: request, engine: defaultEngine)
    }
}
