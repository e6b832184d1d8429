import CurlewOperations
import CurlewTransport
import Foundation

/// One request of the manager's async dialect while it runs: the observer of its current attempt's
/// transfer, and what cancels, pauses and resumes it wherever it waits — a transfer, or the wait
/// before a retry. The manager keeps it while it runs, so that ``RequestOperationManager/shutdown()``
/// reaches it.
///
/// Cancelling is sticky and idempotent: a run cancelled while it prepares an attempt (its
/// interceptor adapting the request) does not start the transfer; one cancelled during a transfer
/// cancels it, and the transfer's one completion (a cancellation) ends the run; one cancelled during
/// a wait ends the wait at once.
///
/// Safety: `@unchecked Sendable` because its own state is read and written only with `lock` held,
/// ``registrySlot`` only with its ``RunRegistry``'s lock held; `progress` is immutable.
final class RequestRun: TransferObserver, @unchecked Sendable {
    private enum Stage {
        /// Between attempts, or preparing one.
        case idle
        /// A transfer is being started: a cancel or pause now is carried out once `start()` returned
        /// (a transport may ignore one that reaches a transfer not started yet).
        case starting(CheckedContinuation<Result<TransferResponse, TransferError>, Never>?)
        /// A transfer runs; its completion resumes the continuation.
        case transferring(any TransferControl, CheckedContinuation<Result<TransferResponse, TransferError>, Never>)
        /// A transfer streams its response body to a reader, who sees its end.
        case streaming(any TransferControl)
        /// Waiting before a retry; resumed with `false` when cancelled.
        case waiting(CheckedContinuation<Bool, Never>)
    }

    private let lock = PThreadMutex()
    @exclusivity(unchecked) private var stage = Stage.idle
    @exclusivity(unchecked) private var isCancelledStorage = false
    @exclusivity(unchecked) private var isPaused = false
    /// A pause came while the transfer was being started: it is carried out even when a resume
    /// followed it, so that the transfer sees both, in order (a connection released mid-body stays so).
    @exclusivity(unchecked) private var pausedWhileStarting = false
    @exclusivity(unchecked) private var attemptsStarted = 0
    /// Where the manager's ``RunRegistry`` keeps the run (-1: not kept); guarded by the registry's lock.
    @exclusivity(unchecked) var registrySlot = -1
    /// Told of the transfers' progress (on the transport's context: keep it short).
    let progress: (@Sendable (TransferProgress) -> Void)?

    init(progress: (@Sendable (TransferProgress) -> Void)? = nil) {
        self.progress = progress
    }

    deinit {
        self.lock.deallocate()
    }

    /// Whether the run was cancelled.
    var isCancelled: Bool {
        self.lock.withLock { self.isCancelledStorage }
    }

    /// How many attempts have started a transfer.
    var attempts: Int {
        self.lock.withLock { self.attemptsStarted }
    }

    /// Whether the run waits before a retry.
    var isWaiting: Bool {
        self.lock.withLock {
            if case .waiting = self.stage { return true }
            return false
        }
    }

    /// Whether the run was paused (and not resumed since).
    var isPausedNow: Bool {
        self.lock.withLock { self.isPaused }
    }

    /// Runs `request` as one transfer of `transport` and returns its outcome; cancelling the calling
    /// task (or the run) cancels the transfer, whose outcome is then a cancellation.
    func transfer(_ request: TransferRequest, on transport: any TransferRunning) async -> Result<TransferResponse, TransferError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<TransferResponse, TransferError>, Never>) in
                let starts = self.lock.withLock { () -> Bool in
                    guard !self.isCancelledStorage else { return false }
                    self.stage = .starting(continuation)
                    self.attemptsStarted += 1
                    return true
                }
                guard starts else {
                    continuation.resume(returning: .failure(TransferError.cancelled(url: request.url)))
                    return
                }
                let transfer = transport.makeTransfer(request, observer: self)
                transfer.start()
                self.started(transfer, stage: .transferring(transfer, continuation))
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// Starts `request`, whose destination is `stream`, as one transfer of `transport`, and returns
    /// once the response head arrived; the body is the stream's reader's. `ended` is told when the
    /// transfer ends (set it with ``StreamEnd/whenEnded(_:)``). Cancelling the calling task before
    /// the head, or the run at any time, cancels the transfer.
    func stream(
        _ request: TransferRequest, into stream: ResponseBodyStream, on transport: any TransferRunning, ended: StreamEnd
    ) async -> Result<(HTTPResponse, URL), TransferError> {
        let starts = self.lock.withLock { () -> Bool in
            guard !self.isCancelledStorage else { return false }
            self.stage = .starting(nil)
            self.attemptsStarted += 1
            return true
        }
        guard starts else { return .failure(TransferError.cancelled(url: request.url)) }
        let transfer = transport.makeTransfer(request, observer: ended)
        transfer.start()
        self.started(transfer, stage: .streaming(transfer))
        do {
            return .success(try await stream.head())
        } catch {
            return .failure(error)
        }
    }

    /// `transfer` has started: the run moves to `stage`, unless the transfer completed meanwhile, and
    /// a cancel, pause or resume that came while it started is carried out now, in order: the run
    /// stays in `.starting` (so that later calls only record themselves) until nothing is left to do.
    private func started(_ transfer: any TransferControl, stage: Stage) {
        var transferPaused = false
        while true {
            let step = self.lock.withLock { () -> StartStep? in
                guard case .starting = self.stage else { return nil }  // it completed meanwhile
                if self.isCancelledStorage {
                    self.stage = stage
                    return .cancel
                }
                let pauses = !transferPaused && (self.isPaused || self.pausedWhileStarting)
                self.pausedWhileStarting = false
                if pauses { return .pause }
                if transferPaused && !self.isPaused { return .resume }
                self.stage = stage
                return nil
            }
            switch step {
            case nil: return
            case .cancel?:
                transfer.cancel()
                return
            case .pause?:
                transfer.pause()
                transferPaused = true
            case .resume?:
                transfer.resume()
                transferPaused = false
            }
        }
    }

    private enum StartStep {
        case cancel, pause, resume
    }

    /// Waits `delay` before a retry; `false` when the run was cancelled first (or meanwhile).
    func wait(_ delay: Duration) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let waits = self.lock.withLock { () -> Bool in
                    guard !self.isCancelledStorage else { return false }
                    self.stage = .waiting(continuation)
                    return true
                }
                guard waits else {
                    continuation.resume(returning: false)
                    return
                }
                Self.timers.asyncAfter(deadline: .now() + Self.interval(delay)) { [weak self] in
                    self?.endWait(cancelled: false)
                }
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// Ends the run's current stage as cancelled; later stages do not start.
    func cancel() {
        let stage = self.lock.withLock { () -> Stage in
            guard !self.isCancelledStorage else { return .idle }  // said once is enough
            self.isCancelledStorage = true
            return self.stage
        }
        switch stage {
        case .idle, .starting: break  // a transfer being started is cancelled once `start()` returned
        case .transferring(let transfer, _), .streaming(let transfer): transfer.cancel()
        case .waiting: self.endWait(cancelled: true)
        }
    }

    /// Pauses the running transfer (and the next attempt's, if it starts paused).
    func pause() {
        let transfer = self.lock.withLock { () -> (any TransferControl)? in
            self.isPaused = true
            switch self.stage {
            case .transferring(let transfer, _): return transfer
            case .starting: self.pausedWhileStarting = true
            default: break
            }
            return nil
        }
        transfer?.pause()  // a streaming transfer is paused by its reader
    }

    /// Resumes a paused transfer.
    func resume() {
        let transfer = self.lock.withLock { () -> (any TransferControl)? in
            self.isPaused = false
            if case .transferring(let transfer, _) = self.stage { return transfer }
            return nil
        }
        transfer?.resume()
    }

    private func endWait(cancelled: Bool) {
        let continuation = self.lock.withLock { () -> CheckedContinuation<Bool, Never>? in
            guard case .waiting(let continuation) = self.stage else { return nil }
            self.stage = .idle
            return continuation
        }
        continuation?.resume(returning: !cancelled)
    }

    // MARK: TransferObserver

    func transferDidUpdate(_ progress: TransferProgress) {
        self.progress?(progress)
    }

    func transferDidComplete(with result: Result<TransferResponse, TransferError>) {
        let continuation = self.lock.withLock { () -> CheckedContinuation<Result<TransferResponse, TransferError>, Never>? in
            switch self.stage {
            case .transferring(_, let continuation), .starting(let continuation?):
                self.stage = .idle
                return continuation
            default:
                return nil
            }
        }
        continuation?.resume(returning: result)
    }

    // MARK: Timers

    /// Where the waits before retries are timed.
    private static let timers = DispatchQueue(label: "curlew.manager.retry-timers")

    private static func interval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(clamping: nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}

/// Hears the end of one streaming attempt's transfer, and tells whoever asked (the manager, to let the
/// run go and finish the request once the body ended).
///
/// Safety: `@unchecked Sendable` because `result` and `action` are read and written only with
/// `lock` held; `progress` is immutable.
final class StreamEnd: TransferObserver, @unchecked Sendable {
    private let lock = PThreadMutex()
    @exclusivity(unchecked) private var result: Result<TransferResponse, TransferError>?
    @exclusivity(unchecked) private var action: (@Sendable (Result<TransferResponse, TransferError>) -> Void)?
    private let progress: (@Sendable (TransferProgress) -> Void)?

    init(progress: (@Sendable (TransferProgress) -> Void)?) {
        self.progress = progress
    }

    deinit {
        self.lock.deallocate()
    }

    /// Runs `action` with the transfer's outcome when it ends (at once if it has).
    func whenEnded(_ action: @escaping @Sendable (Result<TransferResponse, TransferError>) -> Void) {
        let ended = self.lock.withLock { () -> Result<TransferResponse, TransferError>? in
            if self.result == nil { self.action = action }
            return self.result
        }
        if let ended { action(ended) }
    }

    func transferDidUpdate(_ progress: TransferProgress) {
        self.progress?(progress)
    }

    func transferDidComplete(with result: Result<TransferResponse, TransferError>) {
        let action = self.lock.withLock { () -> (@Sendable (Result<TransferResponse, TransferError>) -> Void)? in
            self.result = result
            defer { self.action = nil }
            return self.action
        }
        action?(result)
    }
}
