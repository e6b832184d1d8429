#if canImport(Glibc)
import Glibc
#endif

/// A rule that sends the connections for some host and port somewhere else, while the request keeps
/// its URL: the `Host` field, TLS's SNI and the certificate check still use the URL's host (curl's
/// `CURLOPT_CONNECT_TO`, `curl --connect-to`).
///
/// ```swift
/// // Test the new server before the DNS switch: same URL, other machine.
/// request.options.connectTo = [ConnectTo(host: "api.example.com", connectHost: "10.0.0.7")]
/// ```
///
/// A `nil` part matches any host or port (`host`, `port`), or keeps the URL's (`connectHost`,
/// `connectPort`). The first rule that matches an attempt applies; redirects are matched anew, so
/// a redirect to another host is not rewritten by a rule for the first. A connection made under a
/// rule is only reused by transfers that connect to the same place.
public struct ConnectTo: Sendable, Hashable {
    /// The URL host the rule applies to (a name, an IPv4 address or a bracketed IPv6 address);
    /// `nil`: any.
    public var host: String?
    /// The URL port the rule applies to; `nil`: any.
    public var port: Int?
    /// Where to connect instead (a name, an IPv4 address or a bracketed IPv6 address); `nil`: the
    /// URL's host.
    public var connectHost: String?
    /// Which port to connect to instead; `nil`: the URL's port.
    public var connectPort: Int?

    /// Creates a rule; see the properties for what `nil` means.
    public init(host: String? = nil, port: Int? = nil, connectHost: String? = nil, connectPort: Int? = nil) {
        self.host = host
        self.port = port
        self.connectHost = connectHost
        self.connectPort = connectPort
    }
}

/// Which IP versions a transfer may connect over (`CURLOPT_IPRESOLVE`).
public enum IPVersionPreference: Sendable, Hashable {
    /// IPv6 and IPv4, both tried when a name has both ("happy eyeballs"; the default).
    case any
    /// IPv4 addresses only: names without one fail with ``TransferError/Code/cannotFindHost``.
    case ipv4Only
    /// IPv6 addresses only: names without one fail with ``TransferError/Code/cannotFindHost``.
    case ipv6Only
}

/// curl's `CURLOPT_CONNECT_TO` lines for a transfer's ``ConnectTo`` rules and its
/// ``TransferOptions/dnsOverride``, checked: a value with no I/O, tested on its own.
///
/// An address override is a rule for its host, any port, to the address, keeping the port
/// (`name::address:`). It is not `CURLOPT_RESOLVE`: that option puts its entries into the multi
/// handle's DNS cache, where every later transfer of the engine finds them (libcurl 7.88 keeps them
/// until the engine goes), and curl reuses a connection made with one for transfers that did not
/// ask for it. A connect-to rule is part of the connection's identity instead: only transfers with
/// the same rule share it.
struct ConnectRules: Equatable {
    /// The lines, in order: the ``ConnectTo`` rules as given, then the overrides by host name.
    let lines: [String]

    /// Checks and formats the rules.
    ///
    /// - Throws: ``TransferError/Code/invalidRequest`` for a host that is not a name, an IPv4
    ///   address or a bracketed IPv6 address, a port outside 1...65535, or an override whose
    ///   address is not an IP address.
    init(connectTo: [ConnectTo], dnsOverride: [String: String]) throws(TransferError) {
        var lines: [String] = []
        lines.reserveCapacity(connectTo.count + dnsOverride.count)
        for rule in connectTo {
            lines.append(try Self.field(rule.host, "host") + ":" + Self.port(rule.port) + ":"
                         + Self.field(rule.connectHost, "connect host") + ":" + Self.port(rule.connectPort))
        }
        for (host, address) in dnsOverride.sorted(by: { $0.key < $1.key }) {
            guard let literal = IPAddressLiteral(address) else {
                throw TransferError(.invalidRequest, "The DNS override for \"\(host)\" is not an IP address: \"\(address)\".")
            }
            lines.append(try Self.field(host, "host") + "::" + literal.bracketed + ":")
        }
        self.lines = lines
    }

    /// A host as curl's connect-to syntax takes it: a name (letters, digits, `-`, `.`, `_`), an
    /// IPv4 address, or an IPv6 address, bracketed (a bare one is bracketed here).
    private static func field(_ host: String?, _ what: String) throws(TransferError) -> String {
        guard let host else { return "" }
        if let literal = IPAddressLiteral(host) { return literal.bracketed }
        let isName = !host.isEmpty && host.utf8.count <= 253 && host.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
        }
        guard isName else {
            throw TransferError(.invalidRequest, "The \(what) \"\(host)\" is not a host name or an IP address.")
        }
        return host
    }

    private static func port(_ port: Int?) throws(TransferError) -> String {
        guard let port else { return "" }
        guard (1...65535).contains(port) else {
            throw TransferError(.invalidRequest, "The port \(port) is outside 1...65535.")
        }
        return String(port)
    }
}

/// An IPv4 or IPv6 address written as text, checked by `inet_pton`.
struct IPAddressLiteral: Equatable {
    /// The address as given, without brackets.
    let text: String
    let isIPv6: Bool

    /// `nil` unless `text` (an IPv6 address with or without brackets) is an IP address.
    init?(_ text: String) {
        var bare = Substring(text)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        var storage = in6_addr()
        if inet_pton(AF_INET, String(bare), &storage) == 1 {
            self.isIPv6 = false
        } else if inet_pton(AF_INET6, String(bare), &storage) == 1 {
            self.isIPv6 = true
        } else {
            return nil
        }
        self.text = String(bare)
    }

    /// The address as a URL or curl's connect-to syntax takes it: IPv6 in brackets.
    var bracketed: String { self.isIPv6 ? "[\(self.text)]" : self.text }
}
