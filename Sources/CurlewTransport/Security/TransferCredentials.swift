/// A user name and password for HTTP authentication, answered by curl (`CURLOPT_HTTPAUTH`,
/// `CURLOPT_USERNAME`, `CURLOPT_PASSWORD`).
///
/// Credentials go only to the origin (scheme, host and port) of the request they belong to: when a
/// redirect leads elsewhere, the next attempt carries none (and Curlew drops `Authorization`,
/// `Cookie` and `Proxy-Authorization` headers set by hand as well).
///
/// ```swift
/// var request = TransferRequest(url: url)
/// request.options.credentials = TransferCredentials(user: "ada", password: secret, schemes: .digest)
/// ```
///
/// By default (``Schemes-swift.struct/any``) curl sends the request without them and answers the
/// server's `401` challenge with the strongest scheme both sides know, Basic or Digest — as URLSession
/// answers a challenge: one more round trip, and never a password to a server that did not ask, nor in
/// clear text when Digest was offered. With ``Schemes-swift.struct/basic`` alone they are sent with
/// the first request (as curl `-u` and Python's `requests` do): one round trip, for a server known to
/// want Basic. The `401` curl answers never reaches the caller; a `401` after the answer is the
/// response. The same holds for a proxy's `407`.
public struct TransferCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The authentication schemes curl may use.
    public struct Schemes: OptionSet, Sendable, Hashable {
        /// The schemes as bits: ``basic`` is 1, ``digest`` is 2.
        public let rawValue: Int

        /// Creates a set of schemes from its bits (see ``rawValue``).
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// HTTP Basic (RFC 7617): the password, Base64-encoded, in every request.
        public static let basic = Schemes(rawValue: 1 << 0)
        /// HTTP Digest (RFC 7616): a hash of the password and the server's nonce.
        public static let digest = Schemes(rawValue: 1 << 1)
        /// Both: whichever the server offers, Digest first.
        public static let any: Schemes = [.basic, .digest]
    }

    /// The user name.
    public var user: String
    /// The password.
    public var password: String
    /// Which schemes curl may answer with; ``Schemes-swift.struct/any`` by default.
    public var schemes: Schemes

    /// Creates credentials.
    ///
    /// - Parameters:
    ///   - user: The user name.
    ///   - password: The password.
    ///   - schemes: Which schemes curl may answer with.
    public init(user: String, password: String, schemes: Schemes = .any) {
        self.user = user
        self.password = password
        self.schemes = schemes
    }

    /// The user and the schemes; never the password.
    public var description: String {
        var names: [String] = []
        if self.schemes.contains(.basic) { names.append("basic") }
        if self.schemes.contains(.digest) { names.append("digest") }
        return "TransferCredentials(user: \(self.user), password: <redacted>, schemes: \(names.joined(separator: "|")))"
    }
}
