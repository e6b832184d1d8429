import HTTPTypes
internal import CCurl

extension Transfer {
    /// Sets every option of `easy` for `attempt`; `socketContext` is what the engine's socket
    /// callbacks get (see ``TransferHost/attach(to:multiplexes:configure:)``).
    ///
    /// The options that do not name this transfer form a ``HandleSetup``: a pooled handle already
    /// set up the same way keeps them, and only the per-transfer options below are set again.
    func configure(_ easy: EasyHandle, for attempt: Attempt, socketContext: UnsafeMutableRawPointer) throws(TransferError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let options = self.request.options
        let bodyLength = self.bodyLength(for: attempt)
        // The first attempt goes to the request's own origin; a redirect's is checked.
        let sendsCookies = options.cookieJar != nil && (attempt.redirectCount == 0 || self.sendsCredentials(to: attempt))
        var streamBufferSize: Int?
        if case .stream(let stream) = self.request.destination { streamBufferSize = stream.bufferSize }
        let setup = HandleSetup(options: options, attempt: attempt, sendsBody: bodyLength != nil, sendsCookies: sendsCookies,
                                streamBufferSize: streamBufferSize)

        let isReused = easy.setup == setup
        if isReused {
            easy.forgetLastError()
        } else {
            if easy.setup != nil { easy.reset() }
            try setup.apply(to: easy, socketContext: socketContext)
            easy.setup = setup.isReusable ? setup : nil
        }

        self.streamPauses = 0  // a handle starts with no direction held
        try easy.set(CURLOPT_URL, attempt.target.string)
        try easy.set(CURLOPT_PRIVATE, pointer: me)
        try easy.set(CURLOPT_WRITEDATA, pointer: me)
        try easy.set(CURLOPT_HEADERDATA, pointer: me)
        if let bodyLength {
            // -1: a stream of unknown length, sent chunked (HTTP/1.1) or as DATA frames (HTTP/2).
            try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: bodyLength)
            try easy.set(CURLOPT_READDATA, pointer: me)
            try easy.setSeekCallback(Self.seekCallback, context: me)
        }
        try self.configureHeaders(easy, attempt, setup: setup, replacing: isReused)
        if let deadline = self.deadline {
            // What is left of the total timeout: redirects and resumes do not start it again.
            try easy.set(CURLOPT_TIMEOUT_MS, Self.milliseconds(deadline - .now))
        } else if isReused {
            try easy.set(CURLOPT_TIMEOUT_MS, 0)
        }
        if !setup.isReusable {
            try self.configureSessionOptions(easy, for: attempt)
        }
    }

    /// How many body bytes `attempt` sends, or `nil` when curl's POST machinery is not used.
    private func bodyLength(for attempt: Attempt) -> Int64? {
        if attempt.sendsBody, let source = self.source { return source.length ?? -1 }
        let method = attempt.method
        // Methods that carry a body send `Content-Length: 0` without one.
        return method == .post || method == .put || method == .patch ? 0 : nil
    }

    /// Sets the header list; on a reused handle also when there is none, replacing the last one.
    ///
    /// With decompression on, the list carries the `Accept-Encoding` line that curl would otherwise
    /// format itself for every request (`CURLOPT_ACCEPT_ENCODING`, which stays set and makes curl
    /// decode): the same line, without curl's printf — about 3k instructions per request. A request
    /// with no other field shares one list that is never freed.
    private func configureHeaders(_ easy: EasyHandle, _ attempt: Attempt, setup: HandleSetup, replacing: Bool) throws(TransferError) {
        let acceptEncoding = setup.acceptsEncodings ? StaticHeaderList.acceptEncoding : nil
        let usesPostMechanics = setup.usesBodyMechanics
        if let acceptEncoding, attempt.headerFields.isEmpty, !usesPostMechanics, attempt.resume == nil {
            try easy.set(CURLOPT_HTTPHEADER, list: acceptEncoding.raw)
            return
        }
        let list = CurlHeaderList()
        if let acceptEncoding { list.append(acceptEncoding.line) }
        for field in attempt.headerFields {
            // curl frames the body itself.
            if field.name == .contentLength || field.name == .transferEncoding { continue }
            list.append(field.value.isEmpty ? "\(field.name.rawName);" : "\(field.name.rawName): \(field.value)")
        }
        if usesPostMechanics {
            // Without these, curl adds a form content type and a 100-continue wait of up to 1 s.
            if attempt.headerFields[.contentType] == nil { list.append("Content-Type:") }
            if attempt.headerFields[.expect] == nil { list.append("Expect:") }
        }
        if let resume = attempt.resume {
            list.append("Range: bytes=\(resume.offset)-")
            list.append("If-Range: \(resume.validator.ifRange)")
        }
        guard !list.isEmpty else {
            if replacing { try easy.set(CURLOPT_HTTPHEADER, list: nil) }
            return
        }
        self.headerList = list
        try easy.set(CURLOPT_HTTPHEADER, list: list.raw)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int(max(1, min(milliseconds, Int64(Int32.max))))
    }
}
