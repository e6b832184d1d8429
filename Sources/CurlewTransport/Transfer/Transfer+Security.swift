import Foundation
internal import CCurl

extension Transfer {
    /// The client certificate, when set. (Public-key pins are part of the ``HandleSetup``: curl
    /// checks them after the handshake, whether or not the chain is verified, and fails with
    /// `CURLE_SSL_PINNEDPUBKEYNOTMATCH`, ``TransferError/Code/secureConnectionFailed``.)
    func configureIdentity(_ easy: EasyHandle, tls: TLSOptions) throws(TransferError) {
        guard let identity = tls.clientCertificate else { return }
        try Self.refuseNUL(in: [identity.certificateFile, identity.privateKeyFile, identity.privateKeyPassword],
                           what: "The client certificate", url: self.currentURL)
        try easy.set(CURLOPT_SSLCERT, identity.certificateFile)
        try easy.set(CURLOPT_SSLCERTTYPE, "PEM")
        if let key = identity.privateKeyFile {
            try easy.set(CURLOPT_SSLKEY, key)
            try easy.set(CURLOPT_SSLKEYTYPE, "PEM")
        }
        if let password = identity.privateKeyPassword {
            try easy.set(CURLOPT_KEYPASSWD, password)
        }
    }

    /// curl takes C strings: a NUL would cut one short without a word.
    static func refuseNUL(in strings: [String?], what: String, url: URL?) throws(TransferError) {
        for case let string? in strings where string.utf8.contains(0) {
            throw TransferError(.invalidRequest, "\(what) contains a NUL character.", failingURL: url)
        }
    }
}
