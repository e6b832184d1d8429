/// A TLS failure the test server provokes, at ``TestServer/url(_:)-(TLSFault)``.
///
/// | Case | The URL | What a client that trusts ``TestServer/caCertificatePath`` and ``TestServer/faultCACertificatePath`` sees |
/// | --- | --- | --- |
/// | `.selfSigned` | `https://127.0.0.1:<p>/bytes/10`, a listener of its own | a certificate signed by itself, trusted by nobody |
/// | `.wrongHost` | the same, another listener | a trusted, valid certificate for `wrong-host.invalid` only |
/// | `.expired` | the same, another listener | a trusted certificate for 127.0.0.1 that expired in 2001 |
/// | `.httpsToPlainPort` | `https://` to the plain HTTP listener | an HTTP/1.1 server answering a TLS ClientHello |
/// | `.httpToTLSPort` | `http://` to the TLS listener | a TLS server reading a plain HTTP request |
///
/// The certificates are committed beside the others (`Certificates/README.md` says how they were made).
public enum TLSFault: String, Sendable, Hashable, CaseIterable {
    case selfSigned = "self-signed"
    case wrongHost = "wrong-host"
    case expired = "expired"
    case httpsToPlainPort = "https-to-plain-port"
    case httpToTLSPort = "http-to-tls-port"

    /// The certificate and key file names (in `Certificates/`) of the faults served by a listener of their own.
    var certificateFiles: (certificate: String, key: String)? {
        switch self {
        case .selfSigned, .wrongHost, .expired: return ("\(self.rawValue).pem", "\(self.rawValue).key")
        case .httpsToPlainPort, .httpToTLSPort: return nil
        }
    }
}
