internal import CCurl

/// The options a session (a `RequestOperationManager`) sets on its requests that carry secrets or
/// shared state: a client identity, credentials, cookies, wire tracing. Each is applied by its own
/// file; `configure(_:for:)` calls this once per attempt, on a fresh or reset handle (a handle set
/// up with any of them is reset when it returns to the pool: see ``HandleSetup``). Pins and rate
/// limits hold neither and are part of the ``HandleSetup`` itself.
extension Transfer {
    func configureSessionOptions(_ easy: EasyHandle, for attempt: Attempt) throws(TransferError) {
        try self.configureIdentity(easy, tls: self.request.options.tls)
        try self.configureCredentials(easy, for: attempt)
        try self.configureCookies(easy, for: attempt)
        try self.configureTracing(easy)
    }
}
