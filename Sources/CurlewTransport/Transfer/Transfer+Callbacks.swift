import Foundation
import HTTPTypes
internal import CCurl

/// curl's per-transfer callbacks, and what happens when curl reports the transfer done.
///
/// All of this runs on the engine's context, inside `curl_multi_socket_action`. Callbacks allocate
/// nothing per call beyond what the delegate does; returning a count other than the one given
/// aborts the transfer, after recording why in `pendingError`.
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
        switch self.parser.consume(line) {
        case .needMore, .informational:
            return true
        case .tooLarge:
            self.pendingError = TransferError(
                .responseHeadTooLarge,
                "The response head exceeds \(self.request.options.maximumResponseHeadSize) bytes.",
                failingURL: self.currentURL)
            return false
        case .malformed:
            self.pendingError = TransferError(.badServerResponse, "The response status line is not HTTP.",
                                              failingURL: self.currentURL)
            return false
        case .complete(let head):
            if self.mayBeAnsweredByCurl(head) { self.parser.acceptFollowingResponse() }
            return self.headArrived(head)
        }
    }

    /// Decides what the response whose head just ended is: a redirect to follow, the answer to a
    /// range request, or the response to deliver.
    private func headArrived(_ head: HTTPResponse) -> Bool {
        guard let attempt = self.attempt else { return false }
        if let redirect = self.redirectTarget(for: head, after: attempt) {
            switch redirect {
            case .failure(let error):
                self.pendingError = error
                return false
            case .success(let next):
                self.pendingRedirect = next
                self.bodyMode = .discard
                return true
            }
        }
        if let resume = attempt.resume {
            switch ResumePlanner.decide(head, for: resume) {
            case .append:
                self.bodyMode = .deliver
                return true
            case .skip(let count):
                self.bodyMode = .skip(count)
                return true
            case .retryWithoutRange:
                self.pendingPlainRetry = true
                self.bodyMode = .discard
                return true
            case .restart:
                do {
                    try self.restartBody()
                } catch {
                    self.pendingError = error
                    return false
                }
            }
        }
        let length = head.headerFields[.contentLength].flatMap { Int64($0) }
        if let limit = self.request.options.maximumResponseBodySize, let length, length > limit {
            self.pendingError = Self.tooLarge(limit, url: self.currentURL)
            return false
        }
        let decoded = head.headerFields[.contentEncoding].map { $0.lowercased() != "identity" } ?? false
        self.progress.expectedBytesToReceive = decoded && self.request.options.automaticDecompression ? nil : length
        if let length { self.sink?.reserve(length) }
        self.deliveredHead = head
        self.delegate?.transfer(self, didReceive: head)
        return true
    }

    /// The attempt a redirect response leads to, a refusal, or `nil` when `head` is to be delivered.
    private func redirectTarget(for head: HTTPResponse, after attempt: Attempt) -> Result<Attempt, TransferError>? {
        guard RedirectPlanner.isRedirect(head.status.code),
              case .follow(let maximum) = self.request.options.redirects,
              let location = head.headerFields[.location] else {
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
            var next = try RedirectPlanner.next(after: attempt, status: head.status.code, location: resolved)
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
        switch self.halt {
        case .cancel:
            self.pendingError = TransferError.cancelled(url: self.currentURL)
            return 0
        case .pause:
            return ccurl_writefunc_pause()  // curl keeps the chunk; the handle leaves with it, unkept
        case nil:
            break
        }
        var chunk = bytes
        switch self.bodyMode {
        case .deliver:
            break
        case .discard:
            return bytes.count
        case .skip(let remaining):
            if Int64(bytes.count) <= remaining {
                self.bodyMode = Int64(bytes.count) == remaining ? .deliver : .skip(remaining - Int64(bytes.count))
                return bytes.count
            }
            chunk = UnsafeRawBufferPointer(rebasing: bytes[Int(remaining)...])
            self.bodyMode = .deliver
        }
        let kept = self.sink?.count ?? 0
        if let limit = self.request.options.maximumResponseBodySize, kept + Int64(chunk.count) > limit {
            self.pendingError = Self.tooLarge(limit, url: self.currentURL)
            return 0
        }
        do {
            try self.sink?.write(chunk)
        } catch {
            self.pendingError = error
            return 0
        }
        self.progress.bytesReceived = self.sink?.count ?? 0
        self.delegate?.transfer(self, didUpdate: self.progress)
        return bytes.count
    }

    private func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if self.halt == .cancel {
            self.pendingError = TransferError.cancelled(url: self.currentURL)
            return ccurl_readfunc_abort()
        }
        do {
            let count = try self.source?.read(into: buffer) ?? 0
            if let sent = self.source?.offset, sent > self.progress.bytesSent {
                self.progress.bytesSent = sent
                self.delegate?.transfer(self, didUpdate: self.progress)
            }
            return count
        } catch {
            self.pendingError = error
            return ccurl_readfunc_abort()
        }
    }

    private static func tooLarge(_ limit: Int64, url: URL?) -> TransferError {
        TransferError(.responseTooLarge, "The response body exceeds \(limit) bytes.", failingURL: url)
    }

    // MARK: Done

    /// curl reported the current attempt done (from `curl_multi_info_read`).
    func curlDidFinish(_ result: CURLcode) {
        guard let easy = self.easy, self.machine.state == .running, var attempt = self.attempt else { return }
        if result == CURLE_OK, let next = self.pendingRedirect {
            self.relaunch(next)
            return
        }
        if result == CURLE_OK, self.pendingPlainRetry {
            do {
                try self.restartBody()
            } catch {
                self.completeNow(.failure(error))
                return
            }
            attempt.resume = nil
            self.relaunch(attempt)
            return
        }
        let outcome = result == CURLE_OK ? self.makeResponse(easy) : .failure(self.makeError(easy, result))
        self.completeNow(outcome)
    }

    private func makeResponse(_ easy: EasyHandle) -> Result<TransferResponse, TransferError> {
        guard let head = self.deliveredHead, let url = self.currentURL else {
            return .failure(TransferError(.badServerResponse, "The server sent no response.", failingURL: self.currentURL))
        }
        let stored: (body: Data?, fileURL: URL?)
        do {
            stored = try self.sink?.finish() ?? (nil, nil)
        } catch {
            return .failure(error)
        }
        var metrics = TransferMetrics()
        metrics.redirectCount = self.attempt?.redirectCount ?? 0
        metrics.resumeCount = self.resumeCount
        metrics.connectionsOpened = easy.info(long: CURLINFO_NUM_CONNECTS) ?? 0
        switch easy.info(long: CURLINFO_HTTP_VERSION) {
        case Int(CURL_HTTP_VERSION_1_0): metrics.httpVersion = .http1_0
        case Int(CURL_HTTP_VERSION_1_1): metrics.httpVersion = .http1_1
        case Int(CURL_HTTP_VERSION_2_0): metrics.httpVersion = .http2
        case Int(CURL_HTTP_VERSION_3): metrics.httpVersion = .http3
        default: metrics.httpVersion = .unknown
        }
        func duration(_ item: CURLINFO) -> Duration { .microseconds(easy.info(offset: item) ?? 0) }
        metrics.nameLookup = duration(CURLINFO_NAMELOOKUP_TIME_T)
        metrics.connect = duration(CURLINFO_CONNECT_TIME_T)
        metrics.tlsHandshake = duration(CURLINFO_APPCONNECT_TIME_T)
        metrics.firstByte = duration(CURLINFO_STARTTRANSFER_TIME_T)
        metrics.total = duration(CURLINFO_TOTAL_TIME_T)
        return .success(TransferResponse(head: head, body: stored.body, fileURL: stored.fileURL, url: url, metrics: metrics))
    }

    private func makeError(_ easy: EasyHandle, _ result: CURLcode) -> TransferError {
        if var error = self.pendingError {
            error.failingURL = error.failingURL ?? self.currentURL
            error.curlCode = error.curlCode ?? Int(result.rawValue)
            return error
        }
        let osErrno = easy.info(long: CURLINFO_OS_ERRNO).map { Int32(truncatingIfNeeded: $0) }
        return TransferError(curlCode: result, message: easy.errorMessage, osErrno: osErrno, url: self.currentURL)
    }
}
