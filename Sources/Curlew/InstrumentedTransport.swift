import CurlewOperations
import CurlewTransport
import Foundation
import HTTPTypes
import Logging
import Synchronization

/// A manager's transport with its metrics and logs around it: every transfer the manager runs is
/// counted (``RequestMetrics``) and logged at `.debug` when it starts and when it ends.
///
/// It wraps the `TransferRunning` seam rather than the operations, so it sees transfers exactly
/// as the engine (or a stub) does, whoever made the operation and however it ends.
///
/// `start()` is called by an operation under its lock (see `RequestOperation+Lifecycle.swift`):
/// what runs there — a meter increment, a `.debug` log call only when that level is enabled — is
/// short and never calls back into the operation. Metrics and log handlers must not block, as
/// their own APIs require.
final class InstrumentedTransport: TransferRunning, Sendable {
    let base: any TransferRunning
    private let loggerBox: Locked<Logger>
    /// The logger's level as a number (``rank(_:)``): read on every request without the lock, set with
    /// the logger.
    private let level: Atomic<Int>
    let metrics: RequestMetrics
    /// The one tracer of the manager, handed to requests while the logger is at `.trace`.
    private let tracer: WireTracer

    init(base: any TransferRunning, logger: Logger, metrics: RequestMetrics) {
        self.base = base
        let box = Locked(logger)
        self.loggerBox = box
        self.level = Atomic(Self.rank(logger.logLevel))
        self.metrics = metrics
        self.tracer = WireTracer { transferID, event in
            box.value.trace("\(event)", metadata: ["curlew.transfer": "\(transferID)"])
        }
    }

    /// The logger requests are logged to.
    var logger: Logger {
        get { self.loggerBox.value }
        set {
            self.loggerBox.withLock { logger in
                logger = newValue
                self.level.store(Self.rank(newValue.logLevel), ordering: .relaxed)
            }
        }
    }

    /// Whether the logger wants `level`.
    func logs(at level: Logger.Level) -> Bool {
        self.level.load(ordering: .relaxed) <= Self.rank(level)
    }

    private static func rank(_ level: Logger.Level) -> Int {
        switch level {
        case .trace: 0
        case .debug: 1
        case .info: 2
        case .notice: 3
        case .warning: 4
        case .error: 5
        case .critical: 6
        }
    }

    /// The tracer when the logger wants `.trace`, else `nil` (curl is then not asked to trace).
    func wireTracer() -> WireTracer? {
        self.logs(at: .trace) ? self.tracer : nil
    }

    func makeTransfer(_ request: TransferRequest, observer: any TransferObserver) -> any TransferControl {
        let instrumented = InstrumentedTransfer(head: request.head, observer: observer, transport: self)
        instrumented.base = self.base.makeTransfer(request, observer: instrumented)
        return instrumented
    }

    /// The base transport's: an operation's hand-offs wait for the events the engine has in hand.
    func afterCurrentEvents(_ work: @escaping @Sendable () -> Void) {
        self.base.afterCurrentEvents(work)
    }

    /// One transfer, seen by the metrics and the log: its controls, forwarded (the first `start()`
    /// counts it as in flight), and its events, forwarded once the completion is counted and logged.
    ///
    /// Safety: `@unchecked Sendable` because `base` is set once, by ``makeTransfer(_:observer:)``,
    /// before the transfer is handed to anyone; `startedAt` is written once, by the `start()` that
    /// wins `hasStarted`, before the base transfer starts, and read by its completion, which the
    /// transport delivers after that start.
    private final class InstrumentedTransfer: TransferControl, TransferObserver, @unchecked Sendable {
        let head: HTTPRequest
        let observer: any TransferObserver
        let transport: InstrumentedTransport
        @exclusivity(unchecked) var base: (any TransferControl)?
        private let hasStarted = Atomic<Bool>(false)
        @exclusivity(unchecked) private var startedAt: ContinuousClock.Instant?

        init(head: HTTPRequest, observer: any TransferObserver, transport: InstrumentedTransport) {
            self.head = head
            self.observer = observer
            self.transport = transport
        }

        // MARK: TransferControl

        func start() {
            if !self.hasStarted.exchange(true, ordering: .relaxed) {
                self.startedAt = .now
                self.transport.metrics.started()
                if self.transport.logs(at: .debug) { self.transport.logger.debug("\(self.summary) started") }
            }
            self.base?.start()
        }

        func cancel() { self.base?.cancel() }
        func pause() { self.base?.pause() }
        func resume() { self.base?.resume() }

        // MARK: TransferObserver

        func transferDidUpdate(_ progress: TransferProgress) {
            self.observer.transferDidUpdate(progress)
        }

        func transferDidComplete(with result: Result<TransferResponse, TransferError>) {
            let elapsed = self.startedAt.map { ContinuousClock.now - $0 }
            self.transport.metrics.completed(result, method: self.head.method, after: elapsed)
            if self.transport.logs(at: .debug) {
                let logger = self.transport.logger
                switch result {
                case .success(let response):
                    logger.debug("\(self.summary) \(response.head.status.code) in \(Self.milliseconds(elapsed)) ms",
                                 metadata: ["curlew.bytes": "\(response.body?.count ?? 0)",
                                            "curlew.http": "\(response.metrics.httpVersion.rawValue)"])
                case .failure(let error):
                    logger.debug("\(self.summary) failed after \(Self.milliseconds(elapsed)) ms: \(error)")
                }
            }
            self.observer.transferDidComplete(with: result)
        }

        /// `GET https://…`, for log lines.
        private var summary: String {
            "\(self.head.method.rawValue) \(self.head.scheme ?? "?")://\(self.head.authority ?? "?")\(self.head.path ?? "")"
        }

        private static func milliseconds(_ duration: Duration?) -> String {
            guard let duration else { return "0" }
            let (seconds, attoseconds) = duration.components
            return String(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }
    }
}
