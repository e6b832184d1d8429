import Foundation

/// The SHA-256 digest of a server's public key (its DER-encoded `SubjectPublicKeyInfo`), for
/// public-key pinning (`CURLOPT_PINNEDPUBLICKEY`).
///
/// Pinning the key rather than the certificate survives certificate renewals that keep the key.
/// Compute a pin from a PEM certificate with OpenSSL:
///
/// ```sh
/// openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der \
///     | openssl dgst -sha256 -binary | openssl enc -base64
/// ```
///
/// ```swift
/// guard let pin = PublicKeyPin(base64SHA256: "Vd0jq…=") else { fatalError("not a pin") }
/// request.options.tls.pinnedPublicKeys = [pin, backupPin]
/// ```
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the digest.
    public let sha256: [UInt8]

    /// A pin from the Base64 text of the digest (44 characters, as the OpenSSL command prints it).
    /// `nil` when the text is not Base64 of 32 bytes.
    public init?(base64SHA256 text: String) {
        guard let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        self.init(sha256: bytes)
    }

    /// A pin from the digest's bytes; `nil` unless there are exactly 32.
    public init?(sha256 bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        self.sha256 = Array(bytes)
    }

    /// `sha256//<Base64>`, the form curl takes.
    public var description: String {
        "sha256//" + Data(self.sha256).base64EncodedString()
    }
}
