/// The certificate and private key a client presents when a TLS server asks for one (mutual TLS):
/// `CURLOPT_SSLCERT`, `CURLOPT_SSLKEY`, `CURLOPT_KEYPASSWD`.
///
/// ```swift
/// request.options.tls.clientCertificate = ClientCertificate(
///     certificateFile: "/etc/app/client.pem", privateKeyFile: "/etc/app/client.key")
/// ```
///
/// A file that cannot be read or does not hold what it should fails the transfer with
/// ``TransferError/Code/secureConnectionFailed`` when the connection is set up.
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible {
    /// A PEM file with the client certificate (and the key, when ``privateKeyFile`` is `nil`).
    public var certificateFile: String
    /// A PEM file with the private key; `nil` when it is in ``certificateFile``.
    public var privateKeyFile: String?
    /// The password of an encrypted private key.
    public var privateKeyPassword: String?

    /// Creates a client identity from PEM files.
    ///
    /// - Parameters:
    ///   - certificateFile: The certificate (PEM).
    ///   - privateKeyFile: The private key (PEM), or `nil` when it is in the certificate file.
    ///   - privateKeyPassword: The key's password, if it is encrypted.
    public init(certificateFile: String, privateKeyFile: String? = nil, privateKeyPassword: String? = nil) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.privateKeyPassword = privateKeyPassword
    }

    /// The files; never the password.
    public var description: String {
        "ClientCertificate(certificateFile: \(self.certificateFile), privateKeyFile: \(self.privateKeyFile ?? "nil")"
            + (self.privateKeyPassword == nil ? ")" : ", privateKeyPassword: <redacted>)")
    }
}
