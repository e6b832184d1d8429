internal import CCurl

extension Transfer {
    /// The proxy's credentials (`CURLOPT_PROXYUSERNAME`, `CURLOPT_PROXYPASSWORD`,
    /// `CURLOPT_PROXYAUTH`), from a ``ProxyServer``'s ``ProxyServer/credentials`` or the proxy URL.
    /// They are a secret: the ``HandleSetup`` holds the proxy without them, and a handle that had
    /// them is reset when it returns to the pool.
    func configureProxyCredentials(_ easy: EasyHandle) throws(TransferError) {
        guard self.request.options.proxy.carriesCredentials,
              let credentials = self.request.options.proxy.splittingCredentials.credentials else { return }
        try Self.refuseNUL(in: [credentials.user, credentials.password], what: "The proxy credentials", url: self.currentURL)
        var schemes = 0
        if credentials.schemes.contains(.basic) { schemes |= ccurl_auth_basic() }
        if credentials.schemes.contains(.digest) { schemes |= ccurl_auth_digest() }
        if schemes != 0 { try easy.set(CURLOPT_PROXYAUTH, schemes) }
        try easy.set(CURLOPT_PROXYUSERNAME, credentials.user)
        try easy.set(CURLOPT_PROXYPASSWORD, credentials.password)
    }
}
