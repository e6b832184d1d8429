internal import CCurl

extension Transfer {
    /// Attaches the handle to the request's cookie jar (`CURLOPT_SHARE`) and turns curl's cookie
    /// engine on (`CURLOPT_COOKIEFILE ""`: no file, just the engine). Without a jar, nothing: a
    /// pooled handle left the jar it last used when it was reset (see `EasyHandle.reset()`).
    func configureCookies(_ easy: EasyHandle) throws(TransferError) {
        guard let jar = self.request.options.cookieJar else { return }
        try easy.set(CURLOPT_SHARE, pointer: jar.share)
        try easy.set(CURLOPT_COOKIEFILE, "")
    }
}
