import HTTPTypes
internal import CCurl

extension Transfer {
    /// curl's credentials (`CURLOPT_HTTPAUTH`, `CURLOPT_USERNAME`, `CURLOPT_PASSWORD`), for an
    /// attempt to the request's own origin only.
    ///
    /// Curlew follows redirects itself and configures every attempt on a reset handle, so an
    /// attempt to another origin simply gets no credentials: curl's, like the `Authorization`
    /// header `RedirectPlanner` drops, never leave the origin they were given for.
    func configureCredentials(_ easy: EasyHandle, for attempt: Attempt) throws(TransferError) {
        guard let credentials = self.request.options.credentials, self.sendsCredentials(to: attempt) else { return }
        try Self.refuseNUL(in: [credentials.user, credentials.password], what: "The credentials", url: self.currentURL)
        var schemes = 0
        if credentials.schemes.contains(.basic) { schemes |= ccurl_auth_basic() }
        if credentials.schemes.contains(.digest) { schemes |= ccurl_auth_digest() }
        guard schemes != 0 else { return }
        try easy.set(CURLOPT_HTTPAUTH, schemes)
        try easy.set(CURLOPT_USERNAME, credentials.user)
        try easy.set(CURLOPT_PASSWORD, credentials.password)
    }

    /// Whether `attempt` goes to the origin of the request as given.
    func sendsCredentials(to attempt: Attempt) -> Bool {
        guard let original = try? RequestTarget(validating: self.request.head) else { return false }
        return RedirectPlanner.origin(of: attempt.target) == RedirectPlanner.origin(of: original)
    }

    /// Whether curl may answer `head` and send the request again in the same attempt: a `401`
    /// while it has credentials for the request's origin, a proxy's `407` while it has the proxy's.
    /// The parser then accepts another response after it (curl skips the challenge's body); if none
    /// comes, `head` is the response.
    ///
    /// curl decides only after the header callback has seen the end of the head, so Curlew cannot
    /// ask it; letting a following response replace the challenge gets the same result without
    /// guessing curl's choice.
    func mayBeAnsweredByCurl(_ head: HTTPResponse) -> Bool {
        switch head.status.code {
        case 401:
            guard self.request.options.credentials != nil, let attempt = self.attempt else { return false }
            return self.sendsCredentials(to: attempt)
        case 407:
            return self.request.options.proxy.carriesCredentials
        default:
            return false
        }
    }
}
