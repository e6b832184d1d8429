import Foundation
internal import CCurl

extension Transfer {
    /// Public-key pins (`CURLOPT_PINNEDPUBLICKEY`) and the client certificate, when set.
    ///
    /// curl checks the pins after the handshake, whether or not the chain is verified, and fails
    /// with `CURLE_SSL_PINNEDPUBKEYNOTMATCH` (``TransferError/Code/secureConnectionFailed``).
    func configurePinningAndIdentity(_ easy: EasyHandle, tls: TLSOptions) throws(TransferError) {
        if !tls.pinnedPublicKeys.isEmpty {
            try easy.set(CURLOPT_PINNEDPUBLICKEY, tls.pinnedPublicKeys.map(\.description).joined(separator: ";"))
        }
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
