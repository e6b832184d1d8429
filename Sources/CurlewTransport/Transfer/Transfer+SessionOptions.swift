internal import CCurl

/// The options a session (a `RequestOperationManager`) sets on its requests beyond the basics:
/// pinning and a client identity, credentials, cookies, rate limits, wire tracing. Each is applied
/// by its own file; `configure(_:for:)` calls this once per attempt, on a freshly reset handle.
extension Transfer {
    func configureSessionOptions(_ easy: EasyHandle, for attempt: Attempt) throws(TransferError) {
        let options = self.request.options
        try self.configurePinningAndIdentity(easy, tls: options.tls)
        try self.configureCredentials(easy, for: attempt)
        try self.configureCookies(easy)
        if let rate = options.maximumUploadBytesPerSecond, rate > 0 {
            try easy.set(CURLOPT_MAX_SEND_SPEED_LARGE, offset: rate)
        }
        if let rate = options.maximumDownloadBytesPerSecond, rate > 0 {
            try easy.set(CURLOPT_MAX_RECV_SPEED_LARGE, offset: rate)
        }
        try self.configureTracing(easy)
    }
}
