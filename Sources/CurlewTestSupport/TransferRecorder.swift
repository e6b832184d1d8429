import CurlewTransport
import HTTPTypes

/// A delegate that records everything a transfer reports, checks that each call happens on the
/// engine's context, and lets a test wait for the completion.
///
/// ```swift
/// let recorder = TransferRecorder(engine)
/// engine.makeTransfer(TransferRequest(url: try testServer().url(.bytes(10))), delegate: recorder).start()
/// let result = try #require(await recorder.result())
/// ```
public final class TransferRecorder: TransferDelegate, Sendable {
    /// What the transfer reported so far.
    public struct Events: Sendable {
        /// Response heads (`transfer(_:didReceive:)`).
        public var heads: [HTTPResponse] = []
        /// Progress reports.
        public var progress: [TransferProgress] = []
        /// The requests of the redirects the delegate was asked about.
        public var redirects: [HTTPRequest] = []
        /// Pauses reported.
        public var pauses = 0
        /// Completions (exactly one, for a correct engine).
        public var completions: [Result<TransferResponse, TransferError>] = []
        /// Delegate calls that did not run on the engine's context.
        public var callsOffContext = 0
    }

    /// The events, under a lock.
    package let events = Locked(Events())
    private let scheduler: any TransferScheduler
    private let onProgress: (@Sendable (Transfer, TransferProgress) -> Void)?
    private let onRedirect: (@Sendable (HTTPRequest) -> HTTPRequest?)?

    /// Creates a recorder for a transfer of `engine`.
    ///
    /// - Parameters:
    ///   - engine: The engine whose context every call must arrive on.
    ///   - onProgress: Runs (on the context) after each progress report is recorded.
    ///   - onRedirect: Decides each redirect (`nil` stops it); by default every redirect is followed.
    public init(
        _ engine: TransferEngine,
        onProgress: (@Sendable (Transfer, TransferProgress) -> Void)? = nil,
        onRedirect: (@Sendable (HTTPRequest) -> HTTPRequest?)? = nil
    ) {
        self.scheduler = engine.scheduler
        self.onProgress = onProgress
        self.onRedirect = onRedirect
    }

    private func record(_ change: (inout Events) -> Void) {
        let onContext = self.scheduler.isOnContext
        self.events.withLock { events in
            if !onContext { events.callsOffContext += 1 }
            change(&events)
        }
    }

    public func transfer(_ transfer: Transfer, didReceive response: HTTPResponse) {
        self.record { $0.heads.append(response) }
    }

    public func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) {
        self.record { $0.progress.append(progress) }
        self.onProgress?(transfer, progress)
    }

    public func transfer(_ transfer: Transfer, willRedirect response: HTTPResponse, to request: HTTPRequest) -> HTTPRequest? {
        self.record { $0.redirects.append(request) }
        return self.onRedirect.map { $0(request) } ?? request
    }

    public func transferDidPause(_ transfer: Transfer) {
        self.record { $0.pauses += 1 }
    }

    public func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.record { $0.completions.append(result) }
    }

    /// How many completions arrived.
    public var completionCount: Int { self.events.value.completions.count }

    /// Waits for the first completion and returns it; `nil` if none came within `timeout`.
    public func result(timeout: Duration = .seconds(60)) async -> Result<TransferResponse, TransferError>? {
        guard await waitUntil(timeout: timeout, { self.completionCount > 0 }) else { return nil }
        return self.events.value.completions.first
    }
}
