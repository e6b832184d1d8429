import Foundation
import HTTPTypes
internal import CCurl

/// curl's per-transfer callbacks, and what happens when curl reports the transfer done.
///
/// All of this runs on the engine's context, inside `curl_multi_socket_action`. Callbacks allocate
/// nothing per call beyond what the delegate does. What a callback does is the state machine's
/// decision (``TransferStateMachine/Phase``); a callback that finds a failure records it there
/// (``TransferStateMachine/failed(_:)``) and returns what aborts the transfer.
extension Transfer {
    static let writeCallback: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
    }

    static let headerCallback: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: size * count)) ? size * count : 0
    }

    static let readCallback: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return ccurl_readfunc_abort() }
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
    }

    static let seekCallback: ccurl_seek_callback = { userdata, offset, origin in
        guard let userdata, origin == SEEK_SET else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.source?.seek(to: Int64(offset)) == true ? Int32(CURL_SEEKFUNC_OK) : Int32(CURL_SEEKFUNC_FAIL)
    }

    // MARK: Response head

    private func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        guard self.machine.wantsHead else { return false }
        switch self.parser.consume(line) {
        case .needMore, .informational:
            return true
        case .tooLarge:
            self.machine.failed(TransferError(
                .responseHeadTooLarge,
                "The response head exceeds \(self.request.options.maximumResponseHeadSize) bytes.",
                failingURL: self.currentURL))
            return false
        case .malformed:
            self.machine.failed(TransferError(.badServerResponse, "The response status line is not HTTP.",
                                              failingURL: self.currentURL))
            return false
        case .invalidFraming(let reason):
            self.machine.failed(TransferError(.badServerResponse, reason, failingURL: self.currentURL))
            return false
        case .complete(let head):
            if self.mayBeAnsweredByCurl(head) { self.parser.acceptFollowingResponse() }
            return self.headArrived(head, self.parser.facts)
        }
    }

    /// Decides what the response whose head just ended is: a redirect to follow, the answer to a
    /// range request, or the response to deliver.
    private func headArrived(_ head: HTTPResponse, _ facts: ResponseHeadParser.Facts) -> Bool {
        guard let attempt = self.attempt else { return false }
        if let easy = self.easy { self.noteAnsweredVersion(easy, attempt: attempt) }
        if let redirect = self.redirectTarget(for: head, location: facts.location, after: attempt) {
            switch redirect {
            case .failure(let error): return self.machine.headArrived(.fail(error))
            case .success(let next): return self.machine.headArrived(.drain(then: .redirect(next)))
            }
        }
        if let resume = attempt.resume {
            switch ResumePlanner.decide(head, for: resume) {
            case .append:
                return self.machine.headArrived(.deliver)
            case .skip(let count):
                return self.machine.headArrived(.skip(count))
            case .retryWithoutRange:
                return self.machine.headArrived(.drain(then: .retryWithoutRange))
            case .restart:
                do {
                    try self.restartBody()
                } catch {
                    return self.machine.headArrived(.fail(error))
                }
            }
        }
        let length = facts.contentLength
        if let length, let error = self.bodyLimits.checkAnnounced(length: length) {
            return self.machine.headArrived(.fail(error))
        }
        guard self.machine.headArrived(.deliver) else { return false }
        self.decodesBody = facts.isContentEncoded && self.request.options.automaticDecompression
        self.progress.expectedBytesToReceive = self.decodesBody ? nil : length
        if let length { self.sink?.reserve(length) }
        self.deliveredHead = head
        // The delegate (and whatever observes through it) hears of the head before a stream's
        // reader can act on it.
        self.delegate?.transfer(self, didReceive: head)
        if case .stream(let stream) = self.request.destination, let url = self.currentURL {
            // A stream's head cannot be taken back: a challenge curl may answer waits for its body.
            if self.mayBeAnsweredByCurl(head) {
                self.heldStreamHead = (head, url)
            } else {
                self.heldStreamHead = nil
                stream.receiveHead(head, url: url)
            }
        }
        return true
    }

    /// The attempt a redirect response leads to, a refusal, or `nil` when `head` is to be delivered.
    private func redirectTarget(for head: HTTPResponse, location: String?, after attempt: Attempt) -> Result<Attempt, TransferError>? {
        guard RedirectPlanner.isRedirect(head.status.code),
              case .follow(let maximum) = self.request.options.redirects,
              let location else {
            return nil
        }
        // With automatic following off, curl still resolves Location against the current URL.
        let resolved = self.easy?.info(string: CURLINFO_REDIRECT_URL)
            ?? URL(string: location, relativeTo: attempt.target.url)?.absoluteString
        guard let resolved else {
            return .failure(TransferError(.badServerResponse, "Invalid Location \"\(location)\".",
                                          failingURL: self.currentURL))
        }
        guard attempt.redirectCount < maximum else {
            return .failure(TransferError(.tooManyRedirects, "Stopped after \(maximum) redirects; the next was to \(resolved).",
                                          failingURL: self.currentURL))
        }
        do {
            var next = try RedirectPlanner.next(after: attempt, status: head.status.code, location: resolved,
                                                secretHeaderNames: self.request.options.secretHeaderNames)
            if next.sendsBody, !self.canResendBody {
                return .failure(TransferError(
                    .requestBodyStreamExhausted,
                    "A \(head.status.code) redirect to \(resolved) needs the request body again, but it was streamed and cannot be sent twice.",
                    failingURL: self.currentURL))
            }
            if let delegate = self.delegate {
                guard let decided = delegate.transfer(self, willRedirect: head, to: next.head) else { return nil }
                if decided != next.head {
                    next.target = try RequestTarget(validating: decided)
                    next.method = decided.method
                    next.headerFields = decided.headerFields
                }
            }
            return .success(next)
        } catch {
            return .failure(error)
        }
    }

    // MARK: Body

    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        let chunk: UnsafeRawBufferPointer
        switch self.machine.bodyArrived(count: bytes.count) {
        case .abort:
            return 0
        case .pause:
            return ccurl_writefunc_pause()  // curl keeps the chunk; the handle leaves with it, unkept
        case .drop:
            return bytes.count
        case .deliver(let offset):
            chunk = offset == 0 ? bytes : UnsafeRawBufferPointer(rebasing: bytes[offset...])
        }
        let total = (self.sink?.count ?? 0) + Int64(chunk.count)
        // curl counts a read's bytes on the wire before it hands out their decoded bytes.
        let received = self.decodesBody ? self.easy?.info(offset: CURLINFO_SIZE_DOWNLOAD_T) : nil
        if let error = self.bodyLimits.check(total: total, received: received) {
            self.machine.failed(error)
            return 0
        }
        self.publishHeldStreamHead()
        do {
            guard try self.sink?.write(chunk) ?? true else {
                // A stream's consumer is behind: curl keeps the bytes and offers them again once the
                // stream resumes the transfer (only whole callbacks are refused: `offset` is 0 here,
                // since a skip ends before the stream's first byte).
                self.holdForStream(CURLPAUSE_RECV)
                return ccurl_writefunc_pause()
            }
        } catch {
            self.machine.failed(error)
            return 0
        }
        self.progress.bytesReceived = self.sink?.count ?? 0
        self.delegate?.transfer(self, didUpdate: self.progress)
        return bytes.count
    }

    private func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard self.machine.sendsBody else { return ccurl_readfunc_abort() }
        guard self.source != nil else { return 0 }
        do {
            guard let count = try self.source?.read(into: buffer) else {
                self.holdForStream(CURLPAUSE_SEND)  // a stream has nothing yet: it resumes the transfer
                return ccurl_readfunc_pause()
            }
            if let sent = self.source?.offset, sent > self.progress.bytesSent {
                self.progress.bytesSent = sent
                self.delegate?.transfer(self, didUpdate: self.progress)
            }
            return count
        } catch {
            self.machine.failed(error)
            return ccurl_readfunc_abort()
        }
    }

    // MARK: Done

    /// curl reported the current attempt done (from `curl_multi_info_read`).
    func curlDidFinish(_ result: CURLcode) {
        self.driver.scheduler.assertOnContext()
        guard let easy = self.easy, self.machine.isRunning, var attempt = self.attempt else { return }
        switch self.machine.attemptEnded(succeeded: result == CURLE_OK) {
        case .relaunch(let next):
            self.relaunch(next)
        case .retryWithoutRange:
            do {
                try self.restartBody()
            } catch {
                self.completeNow(.failure(error))
                return
            }
            attempt.resume = nil
            self.relaunch(attempt)
        case .succeed:
            self.completeNow(self.makeResponse(easy))
        case .fail(var error):
            error.failingURL = error.failingURL ?? self.currentURL
            if result != CURLE_OK { error.curlCode = error.curlCode ?? Int(result.rawValue) }
            self.completeNow(.failure(error))
        case .failWithCurlError:
            let osErrno = easy.info(long: CURLINFO_OS_ERRNO).map { Int32(truncatingIfNeeded: $0) }
            self.completeNow(.failure(TransferError(curlCode: result, message: easy.errorMessage, osErrno: osErrno,
                                                    url: self.currentURL,
                                                    awaitingHead: self.machine.phase == .awaitingHead)))
        }
    }

    /// Tells the engine which HTTP version the host of the transfer's connection slot answered in,
    /// when the transfer could have shared a connection there (see ``HostProtocols``): at the head,
    /// so a long body does not keep the engine from knowing. An attempt redirected to another host
    /// tells nothing about the slot's.
    private func noteAnsweredVersion(_ easy: EasyHandle, attempt: Attempt) {
        guard case .holding(let host) = self.slot, self.mayMultiplex(on: host),
              attempt.target.scheme == host.scheme, attempt.target.authority == host.authority else { return }
        self.driver.host(host, answeredIn: Self.httpVersion(of: easy))
    }

    /// The HTTP version of the response `easy` received.
    private static func httpVersion(of easy: EasyHandle) -> TransferMetrics.HTTPVersion {
        switch easy.info(long: CURLINFO_HTTP_VERSION) {
        case Int(CURL_HTTP_VERSION_1_0): .http1_0
        case Int(CURL_HTTP_VERSION_1_1): .http1_1
        case Int(CURL_HTTP_VERSION_2_0): .http2
        case Int(CURL_HTTP_VERSION_3): .http3
        default: .unknown
        }
    }

    private func makeResponse(_ easy: EasyHandle) -> Result<TransferResponse, TransferError> {
        guard let head = self.deliveredHead, let url = self.currentURL else {
            return .failure(TransferError(.badServerResponse, "The server sent no response.", failingURL: self.currentURL))
        }
        let stored: (body: Data?, fileURL: URL?)
        do {
            // A file destination takes only the body of a status the request keeps (not an error page).
            let replacesFile = self.request.options.fileReplacementStatusCodes.contains(head.status.code)
            stored = try self.sink?.finish(replacingFile: replacesFile) ?? (nil, nil)
        } catch {
            return .failure(error)
        }
        var metrics = TransferMetrics()
        metrics.redirectCount = self.attempt?.redirectCount ?? 0
        metrics.resumeCount = self.resumeCount
        metrics.connectionsOpened = easy.info(long: CURLINFO_NUM_CONNECTS) ?? 0
        metrics.httpVersion = Self.httpVersion(of: easy)
        func duration(_ item: CURLINFO) -> Duration { .microseconds(easy.info(offset: item) ?? 0) }
        metrics.nameLookup = duration(CURLINFO_NAMELOOKUP_TIME_T)
        metrics.connect = duration(CURLINFO_CONNECT_TIME_T)
        metrics.tlsHandshake = duration(CURLINFO_APPCONNECT_TIME_T)
        metrics.firstByte = duration(CURLINFO_STARTTRANSFER_TIME_T)
        metrics.total = duration(CURLINFO_TOTAL_TIME_T)
        self.addConnectionMetrics(of: easy, to: &metrics)
        return .success(TransferResponse(head: head, body: stored.body, fileURL: stored.fileURL,
                                         url: self.responseURL(easy, url), metrics: metrics))
    }
}
