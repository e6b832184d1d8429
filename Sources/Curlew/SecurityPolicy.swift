import CurlewTransport

/// How a ``RequestOperationManager`` trusts servers and identifies itself to them: AFNetworking's
/// `AFSecurityPolicy`, on curl.
///
/// Verification is on by default: the server's chain must lead to a trusted root (the system's, or
/// those in ``trustedRootsFile``) and its certificate must name the host. On top of that,
/// ``pinnedPublicKeys`` restrict the server's key to known ones (a mismatch fails with
/// `TransferError/Code/secureConnectionFailed`), and a ``clientCertificate`` answers servers
/// that ask for one.
///
/// ```swift
/// var policy = SecurityPolicy()
/// policy.pinnedPublicKeys = [currentKeyPin, nextKeyPin]     // keep a backup pin for key rotation
/// api.securityPolicy = policy
/// ```
public struct SecurityPolicy: Sendable, Hashable {
    /// Whether the server's certificate chain is checked against the trusted roots. `true` by
    /// default; `false` only for throwaway test servers.
    public var validatesCertificateChain = true
    /// Whether the server's certificate must name the host. `true` by default.
    public var validatesDomainName = true
    /// A PEM file of root certificates to trust instead of the system's.
    public var trustedRootsFile: String?
    /// The public keys the server may have; empty: any (see `PublicKeyPin`).
    public var pinnedPublicKeys: [PublicKeyPin] = []
    /// The certificate and key presented when a server asks for one.
    public var clientCertificate: ClientCertificate?

    /// The default policy: full verification against the system's roots, no pins, no client
    /// certificate.
    public init() {}

    /// A policy that pins `keys`, with full verification.
    ///
    /// - Parameter keys: The public keys the server may have.
    /// - Returns: The policy.
    public static func pinning(_ keys: [PublicKeyPin]) -> SecurityPolicy {
        var policy = SecurityPolicy()
        policy.pinnedPublicKeys = keys
        return policy
    }

    /// The transport's TLS options for this policy.
    public var tlsOptions: TLSOptions {
        var options = TLSOptions(trustedRootsFile: self.trustedRootsFile)
        switch (self.validatesCertificateChain, self.validatesDomainName) {
        case (true, true): options.verification = .full
        case (true, false): options.verification = .noHostnameVerification
        case (false, _): options.verification = .none
        }
        options.pinnedPublicKeys = self.pinnedPublicKeys
        options.clientCertificate = self.clientCertificate
        return options
    }
}
