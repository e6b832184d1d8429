import Foundation
import HTTPTypes

/// One HTTP request and its response, run by a ``TransferEngine``.
///
/// A transfer is made by ``TransferEngine/makeTransfer(_:delegate:)`` and does nothing until
/// ``start()``. Its methods may be called from any thread at any moment; each one is carried to the
/// engine's context and applied there in call order, so a `cancel()` right after `start()` is
/// always seen after it. Its ``TransferDelegate`` hears about it on that context and is told of
/// its end exactly once, whatever happens: success, failure, cancellation at any point, or the
/// engine shutting down.
///
/// ```swift
/// let transfer = engine.makeTransfer(TransferRequest(url: url), delegate: collector)
/// transfer.start()
/// // later, from anywhere:
/// transfer.pause()    // releases the connection, keeps the body so far
/// transfer.resume()   // continues with a Range request when the server allows it
/// transfer.cancel()   // completes with TransferError.Code.cancelled
/// ```
///
/// Safety: `@unchecked Sendable` because every mutable property is confined to the engine's
/// context (each public method only submits work there); `request`, `id` and `driver` are immutable.
public final class Transfer: @unchecked Sendable {
    /// The request as given.
    public let request: TransferRequest
    /// A number unique within the process, for logs.
    public let id: UInt64
    /// The engine, as much of it as a transfer sees.
    let driver: any TransferHost

    // Everything below is confined to the engine's context, one thread at a time, so Swift's dynamic
    // exclusivity checks on these class properties can never find a conflict: they are turned off
    // (`@exclusivity(unchecked)`), which saves several thousand instructions per request.
    @exclusivity(unchecked) var machine = TransferStateMachine()
    @exclusivity(unchecked) var delegate: (any TransferDelegate)?
    /// The current attempt (first request, a redirect's, a resume's).
    @exclusivity(unchecked) var attempt: Attempt?
    /// The easy handle while the transfer runs, added to curl.
    @exclusivity(unchecked) var easy: EasyHandle?
    /// The connection slot the transfer holds or waits for (``ConnectionAdmission``).
    @exclusivity(unchecked) var slot = EngineCore.Slot.none
    @exclusivity(unchecked) var headerList: CurlHeaderList?
    @exclusivity(unchecked) var parser: ResponseHeadParser
    /// The size limits the response body is held to (from the options and the destination).
    let bodyLimits: ResponseBodyLimits
    /// Whether curl decodes the body being delivered (`Content-Encoding`): its size on the wire differs.
    @exclusivity(unchecked) var decodesBody = false
    /// The head of the response being delivered (kept across a resume that appends).
    @exclusivity(unchecked) var deliveredHead: HTTPResponse?
    /// A challenge (401, 407) curl may answer within the attempt, held back from a response stream
    /// until its body or the transfer's end shows it is the response (``Transfer/publishHeldStreamHead()``).
    @exclusivity(unchecked) var heldStreamHead: (head: HTTPResponse, url: URL)?
    @exclusivity(unchecked) var sink: ResponseBodySink?
    @exclusivity(unchecked) var source: RequestBodySource?
    @exclusivity(unchecked) var progress = TransferProgress()
    @exclusivity(unchecked) var resumeCount = 0
    /// The download this transfer continues, until it starts (``continueFromResumeData()``).
    @exclusivity(unchecked) var resumeData: ResumeData?
    /// When the total timeout (``TransferOptions/timeout``) runs out, while running; the engine
    /// completes the transfer as timed out then, wherever it waits.
    @exclusivity(unchecked) var deadline: ContinuousClock.Instant?
    /// What was left of the total timeout when the transfer paused (time paused does not count).
    @exclusivity(unchecked) var timeoutLeftWhilePaused: Duration?
    /// Which directions curl holds because a stream is behind (`CURLPAUSE_RECV`, `CURLPAUSE_SEND`).
    @exclusivity(unchecked) var streamPauses: Int32 = 0
    /// Time waited for connection slots and spent in redirects, for the metrics.
    @exclusivity(unchecked) var timeline = TransferTimeline()

    init(request: TransferRequest, delegate: (any TransferDelegate)?, driver: any TransferHost, id: UInt64) {
        self.request = request
        self.delegate = delegate
        self.driver = driver
        self.id = id
        self.parser = ResponseHeadParser(limit: request.options.maximumResponseHeadSize)
        self.bodyLimits = ResponseBodyLimits(options: request.options, destination: request.destination)
    }

    // MARK: Public control

    /// Starts the transfer. Only the first call of a new transfer does anything.
    public func start() {
        // Started from another thread, its request leaves after the events waiting on the context.
        self.driver.visit(self, deferringDueTimeouts: !self.driver.scheduler.isOnContext) { $0.contextStart() }
    }

    /// Cancels the transfer: it completes with ``TransferError/Code/cancelled`` (carrying the URL)
    /// unless it already completed. Safe at any moment, from any thread, any number of times.
    public func cancel() {
        self.haltNowIfOnContext(cancelling: true)
        self.onContext { $0.contextCancel(TransferError.cancelled(url: $0.currentURL)) }
    }

    /// Pauses a running transfer: its easy handle leaves the multi handle, which releases the
    /// connection, and the body received so far is kept. Does nothing unless running, nor for a
    /// transfer whose body is streamed either way (its consumer pauses it by not reading; a streamed
    /// request body cannot be sent again).
    public func pause() {
        guard !self.streams else { return }
        self.haltNowIfOnContext(cancelling: false)
        self.onContext { $0.contextPause() }
    }

    /// Resumes a paused transfer. When the response had a strong validator (`ETag`, or
    /// `Last-Modified`) the body continues with `Range` and `If-Range`, and the reply is checked to
    /// be a 206 for the same entity from the right offset; otherwise (or if the check fails) the
    /// body starts over. Either way the delivered body is byte-identical. Does nothing unless paused.
    public func resume() {
        self.onContext { $0.contextResume() }
    }

    /// Called on the context (from a delegate callback, typically inside curl's own callbacks), a
    /// cancel or pause must not wait for the queued block: curl may deliver the rest of the body
    /// in the same `curl_multi_socket_action` call. So the next body callback stops at once —
    /// aborting with the cancellation error, or pausing reception — and the queued block finishes
    /// the job (removing the handle is not allowed inside a callback).
    private func haltNowIfOnContext(cancelling: Bool) {
        guard self.driver.scheduler.isOnContext else { return }
        self.machine.haltRequested(cancellingWith: cancelling ? TransferError.cancelled(url: self.currentURL) : nil)
    }

    /// Runs `work` with this transfer on the engine's context, as one visit of the engine.
    func onContext(_ work: @escaping @Sendable (Transfer) -> Void) {
        self.driver.visit(self, deferringDueTimeouts: false, work)
    }

    /// The URL of the current attempt (after redirects).
    var currentURL: URL? {
        guard let attempt = self.attempt else { return self.request.url }
        return self.request.url(for: attempt.target)
    }

    // MARK: Context-side control

    private func contextStart() {
        self.driver.scheduler.assertOnContext()
        guard self.machine.start() == .activate else { return }
        if let timeout = self.request.options.timeout { self.deadline = .now + timeout }
        let running = self.driver.transferRuns(self, until: self.deadline)
        do throws(TransferError) {
            guard running else {
                throw TransferError(.cancelled, "The engine has shut down.", failingURL: self.request.url)
            }
            let target: RequestTarget
            do {
                target = try RequestTarget(validating: self.request.head)
            } catch {
                var invalid = error
                invalid.failingURL = invalid.failingURL ?? self.request.url
                throw invalid
            }
            self.attempt = Attempt(target: target, method: self.request.head.method,
                                   headerFields: self.request.head.headerFields,
                                   sendsBody: self.request.body != nil, redirectCount: 0, resume: nil)
            if let body = self.request.body {
                let source = try RequestBodySource(body)
                self.progress.expectedBytesToSend = source.length
                self.source = source
            }
            try self.claimStreams()
            self.sink = try ResponseBodySink(self.request.destination)
            self.continueFromResumeData()
            try self.launch()
        } catch {
            self.completeNow(.failure(error))
        }
    }

    func contextCancel(_ error: TransferError) {
        self.driver.scheduler.assertOnContext()
        guard self.machine.cancel() == .finish else { return }
        self.finish(.failure(error))
    }

    func engineDidShutDown() {
        self.contextCancel(TransferError(.cancelled, "The engine has shut down.", failingURL: self.currentURL))
    }

    private func contextPause() {
        self.driver.scheduler.assertOnContext()
        guard self.machine.pause() == .deactivate else { return }
        if let deadline = self.deadline {
            self.timeoutLeftWhilePaused = deadline - .now
            self.deadline = nil
        }
        self.releaseHandle()
        self.delegate?.transferDidPause(self)
    }

    private func contextResume() {
        self.driver.scheduler.assertOnContext()
        guard case .paused(let wasDraining) = self.machine.state, self.machine.resume() == .activate,
              var next = self.attempt else { return }
        self.resumeCount += 1
        next.resume = nil
        if let left = self.timeoutLeftWhilePaused {
            self.timeoutLeftWhilePaused = nil
            self.deadline = .now + left
            _ = self.driver.transferRuns(self, until: self.deadline)
        }
        do throws(TransferError) {
            let kept = self.sink?.count ?? 0
            if kept > 0, next.method == .get, !wasDraining,
               let head = self.deliveredHead, let validator = ResumeValidator(head) {
                next.resume = ResumeRequest(offset: kept, validator: validator)
            } else {
                try self.restartBody()
            }
            self.attempt = next
            try self.launch()
        } catch {
            self.completeNow(.failure(error))
        }
    }

    // MARK: Attempts

    /// Starts the current attempt: at once when the transfer holds a connection slot or gets one,
    /// otherwise when its turn comes (``slotGranted()``, then ``startInGrantedSlot()``).
    func launch() throws(TransferError) {
        guard let attempt = self.attempt else { return }
        self.parser = ResponseHeadParser(limit: self.request.options.maximumResponseHeadSize)
        self.machine.attemptStarted()
        _ = self.source?.seek(to: 0)
        if case .none = self.slot {
            let host = ConnectionAdmission.Host(scheme: attempt.target.scheme, authority: attempt.target.authority)
            let multiplexes = HandleSetup.mayMultiplex(self.request.options, scheme: attempt.target.scheme)
            guard self.driver.transferWantsSlot(self, on: host, multiplexes: multiplexes) else {
                self.slot = .waiting(host)
                self.timeline.beganWaitingForSlot()
                return
            }
            self.slot = .holding(host)
        }
        try self.attach(attempt)
    }

    /// Whether the transfer may share a connection to `host` as an HTTP/2 stream (see
    /// ``HandleSetup/mayMultiplex(_:scheme:)``).
    func mayMultiplex(on host: ConnectionAdmission.Host) -> Bool {
        HandleSetup.mayMultiplex(self.request.options, scheme: host.scheme)
    }

    /// The connection slot this transfer waited for is its own; its attempt starts with
    /// ``startInGrantedSlot()``, which the engine calls once it has handled the events in hand
    /// (``EngineCore/transferLeft(_:slot:)``).
    func slotGranted() {
        guard case .waiting(let host) = self.slot else { return }
        self.slot = .holding(host)
        self.timeline.gotSlot()
    }

    /// Starts the current attempt in the slot ``slotGranted()`` gave, unless the transfer has let
    /// the slot go since (it finished, was cancelled or paused), is about to (a cancel or pause
    /// asked for on the context, whose queued work releases the slot), or runs already (paused,
    /// resumed and admitted at once).
    func startInGrantedSlot() {
        guard case .holding = self.slot, self.easy == nil, !self.machine.isHalting, let attempt = self.attempt else {
            return
        }
        do {
            try self.attach(attempt)
        } catch {
            self.completeNow(.failure(error))
        }
    }

    /// Has the engine add a (pooled) easy handle, configured for `attempt`, to curl.
    private func attach(_ attempt: Attempt) throws(TransferError) {
        let host: ConnectionAdmission.Host
        switch self.slot {
        case .holding(let held), .waiting(let held): host = held
        case .none: host = ConnectionAdmission.Host(scheme: attempt.target.scheme, authority: attempt.target.authority)
        }
        let multiplexes = HandleSetup.mayMultiplex(self.request.options, scheme: attempt.target.scheme)
        self.easy = try self.driver.attach(to: host, multiplexes: multiplexes) { (easy, socketContext) throws(TransferError) in
            try self.configure(easy, for: attempt, socketContext: socketContext)
        }
    }

    /// Replaces the finished attempt with `next` on a handle from the pool, in the same slot.
    func relaunch(_ next: Attempt) {
        self.noteRedirect(to: next)
        self.releaseHandle(keepingSlot: true)
        self.attempt = next
        do {
            try self.launch()
        } catch {
            self.completeNow(.failure(error))
        }
    }

    /// Drops the body kept so far: the next response starts it again.
    func restartBody() throws(TransferError) {
        try self.sink?.truncate()
        self.progress.bytesReceived = 0
        self.deliveredHead = nil
    }

    /// Takes the easy handle out of curl and returns it to the pool; gives the connection slot back
    /// (or stops waiting for one) unless `keepingSlot`.
    func releaseHandle(keepingSlot: Bool = false) {
        let easy = self.easy
        var slot = EngineCore.Slot.none
        if !keepingSlot { swap(&slot, &self.slot) }
        self.easy = nil
        self.driver.transferLeft(self, handle: easy, slot: slot)
        self.headerList = nil  // also after a failed attach, whose handle curl never had
    }

    // MARK: Deadline

    /// The engine found the deadline passed while the transfer still runs: curl did not time it out
    /// (it waits for a connection, where curl checks no timeout), so the engine does.
    func deadlineExpired() {
        guard let timeout = self.request.options.timeout else { return }
        self.completeNow(.failure(TransferError(
            .timedOut, "The transfer did not complete within its timeout of \(Self.milliseconds(timeout)) ms.",
            failingURL: self.currentURL)))
    }

    // MARK: Completion

    /// Completes a running transfer (a failure found outside curl's callbacks).
    func completeNow(_ outcome: Result<TransferResponse, TransferError>) {
        guard self.machine.complete() == .finish else { return }
        self.finish(outcome)
    }

    /// Releases everything and tells the delegate. Reached exactly once, through the state machine.
    /// A failure gets the URL being fetched (when it has none yet) and whether its response had started.
    func finish(_ outcome: Result<TransferResponse, TransferError>) {
        var outcome = outcome
        if case .failure(var error) = outcome {
            error.failingURL = error.failingURL ?? self.currentURL
            error.responseStarted = self.parser.hasStarted
            outcome = .failure(error)
        }
        self.deadline = nil
        self.releaseHandle()
        self.source?.close()
        self.endStreams(outcome)
        self.source = nil
        self.sink?.discard()
        self.sink = nil
        self.driver.transferEnded(self)
        let delegate = self.delegate
        self.delegate = nil
        delegate?.transfer(self, didCompleteWith: outcome)
    }
}
