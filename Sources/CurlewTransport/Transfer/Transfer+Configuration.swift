import HTTPTypes
internal import CCurl

extension Transfer {
    /// Sets every option of `easy` for `attempt`, from a freshly reset handle.
    func configure(_ easy: EasyHandle, for attempt: Attempt) throws(TransferError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let options = self.request.options

        try easy.set(CURLOPT_URL, attempt.target.string)
        // Only http and https, ever: curl refuses anything else, including after redirects.
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_PRIVATE, pointer: me)
        try easy.set(CURLOPT_WRITEFUNCTION, callback: Self.writeCallback)
        try easy.set(CURLOPT_WRITEDATA, pointer: me)
        try easy.set(CURLOPT_HEADERFUNCTION, callback: Self.headerCallback)
        try easy.set(CURLOPT_HEADERDATA, pointer: me)
        try easy.setSocketCallbacks(open: MultiDriver.openSocketCallback, close: MultiDriver.closeSocketCallback,
                                    context: self.driver.pointer)

        let usesPostMechanics = try self.configureMethod(easy, attempt, context: me)
        try self.configureHeaders(easy, attempt, usesPostMechanics: usesPostMechanics)

        if let timeout = options.connectTimeout {
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(timeout))
        }
        if let deadline = self.deadline {
            // What is left of the total timeout: redirects and resumes do not start it again.
            try easy.set(CURLOPT_TIMEOUT_MS, Self.milliseconds(deadline - .now))
        }
        if let idle = options.idleTimeout {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, 1)
            try easy.set(CURLOPT_LOW_SPEED_TIME, max(1, (Self.milliseconds(idle) + 999) / 1000))
        }
        switch options.httpVersion {
        case .http1_1:
            try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        case .automatic:
            try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            // Waiting for a first connection to a host to say whether it multiplexes only makes sense
            // where it can: over TLS, where ALPN may choose h2. On plain http the answer is always no,
            // and every transfer started beside the first would wait for that first connection
            // (its whole response, in libcurl 7.88) instead of opening its own.
            if attempt.target.scheme == "https" { try easy.set(CURLOPT_PIPEWAIT, true) }
        case .http2PriorKnowledge:
            try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE))
            try easy.set(CURLOPT_PIPEWAIT, true)
        }
        switch options.tls.verification {
        case .full:
            break
        case .noHostnameVerification:
            try easy.set(CURLOPT_SSL_VERIFYHOST, 0)
        case .none:
            try easy.set(CURLOPT_SSL_VERIFYHOST, 0)
            try easy.set(CURLOPT_SSL_VERIFYPEER, false)
        }
        if let roots = options.tls.trustedRootsFile {
            try easy.set(CURLOPT_CAINFO, roots)
        }
        switch options.proxy {
        case .environment:
            break
        case .none:
            try easy.set(CURLOPT_PROXY, "")
        case .url(let proxy):
            try easy.set(CURLOPT_PROXY, proxy)
        }
        if options.automaticDecompression && attempt.headerFields[.acceptEncoding] == nil {
            try easy.set(CURLOPT_ACCEPT_ENCODING, "")
        }
        try self.configureSessionOptions(easy, for: attempt)
    }

    /// Sets the method and body options. Returns whether curl's POST machinery carries the body.
    private func configureMethod(_ easy: EasyHandle, _ attempt: Attempt, context: UnsafeMutableRawPointer) throws(TransferError) -> Bool {
        let method = attempt.method
        let bodyLength: Int64?
        if attempt.sendsBody, let source = self.source {
            bodyLength = source.length
        } else if method == .post || method == .put || method == .patch {
            bodyLength = 0  // Methods that carry a body send `Content-Length: 0` without one.
        } else {
            bodyLength = nil
        }

        guard let bodyLength else {
            if method == .head {
                try easy.set(CURLOPT_NOBODY, true)
            } else {
                try easy.set(CURLOPT_HTTPGET, true)
                if method != .get { try easy.set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
            }
            return false
        }
        // Any method with a body goes through curl's POST path with a custom method name; that
        // streams the body through the read callback and never reads stdin.
        try easy.set(CURLOPT_POST, true)
        try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: bodyLength)
        try easy.set(CURLOPT_READFUNCTION, callback: Self.readCallback)
        try easy.set(CURLOPT_READDATA, pointer: context)
        try easy.setSeekCallback(Self.seekCallback, context: context)
        if method != .post { try easy.set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
        return true
    }

    private func configureHeaders(_ easy: EasyHandle, _ attempt: Attempt, usesPostMechanics: Bool) throws(TransferError) {
        let list = CurlHeaderList()
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
        guard !list.isEmpty else { return }
        self.headerList = list
        try easy.set(CURLOPT_HTTPHEADER, list: list.raw)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int(max(1, min(milliseconds, Int64(Int32.max))))
    }
}
