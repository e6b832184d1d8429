internal import CCurl

extension Transfer {
    /// Attaches the handle to the request's cookie jar (`CURLOPT_SHARE`) and turns curl's cookie
    /// engine on (`CURLOPT_COOKIEFILE ""`: no file, just the engine), for an attempt to the
    /// request's own origin only: cookies ignore ports and, unless `Secure`, schemes, so curl alone
    /// would send them to another origin of the same host. Otherwise, nothing: a pooled handle left
    /// the jar it last used when it was reset (see `EasyHandle.reset()`).
    func configureCookies(_ easy: EasyHandle, for attempt: Attempt) throws(TransferError) {
        guard let jar = self.request.options.cookieJar, self.sendsCredentials(to: attempt) else { return }
        try easy.set(CURLOPT_SHARE, pointer: jar.share)
        try easy.set(CURLOPT_COOKIEFILE, "")
    }
}
