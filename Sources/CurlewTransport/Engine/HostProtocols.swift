/// Which HTTPS hosts answered in HTTP/1.x: a value with no I/O, tested on its own. Used by
/// ``EngineCore`` on the engine's context only.
///
/// **Why the engine remembers it.** A transfer that may share an HTTP/2 connection (HTTPS, where
/// ALPN may choose `h2`) is admitted a hundred to a connection slot: the engine hands curl up to
/// ``TransferEngine/Configuration/maximumStreamsPerConnection`` times the per-host limit of them at
/// once. When the server answers in HTTP/1.1, each connection carries one request at a time, and
/// curl parks every transfer beyond the per-host limit in its own pending list, which libcurl 7.88
/// walks on every connection change (see ``ConnectionAdmission``). Small GETs over HTTPS to an
/// HTTP/1.1 server, 1,000 in flight and 16 connections, ran at about half the throughput of the
/// same load over plain HTTP, where the engine keeps the waiting transfers itself.
///
/// So the engine notes, per host, the HTTP version of each response head to an HTTPS transfer
/// whose version was negotiated. A host that answered in HTTP/1.x gets one transfer per connection
/// slot, as plain HTTP does: the others wait in the engine. (Its transfers still stay in the first
/// multi handle, see ``EngineCore/placeTransfer(to:multiplexes:)``.) A later answer in HTTP/2 (the
/// server was upgraded) takes the host out again. Until the first answer, a host is treated as one
/// that may multiplex, as before.
///
/// Bounded: an engine that meets ever new HTTP/1.1 hosts forgets them all at ``maximumHosts``.
/// Forgetting costs one burst of transfers admitted as if the host could multiplex.
struct HostProtocols {
    /// HTTPS hosts whose last answer came in HTTP/1.0 or HTTP/1.1.
    private var oneRequestPerConnection: Set<ConnectionAdmission.Host> = []

    /// The most hosts remembered.
    static let maximumHosts = 4_096

    /// How many hosts are remembered.
    var count: Int { self.oneRequestPerConnection.count }

    /// Whether `host`'s last answer to a transfer that could have multiplexed came in HTTP/1.x.
    func answersOneRequestPerConnection(_ host: ConnectionAdmission.Host) -> Bool {
        !self.oneRequestPerConnection.isEmpty && self.oneRequestPerConnection.contains(host)
    }

    /// Notes the HTTP version `host` answered in: HTTP/1.x adds it, HTTP/2 or HTTP/3 takes it out,
    /// anything else (no response head) changes nothing.
    mutating func note(_ version: TransferMetrics.HTTPVersion, from host: ConnectionAdmission.Host) {
        switch version {
        case .http1_0, .http1_1:
            if self.oneRequestPerConnection.count >= Self.maximumHosts, !self.oneRequestPerConnection.contains(host) {
                self.oneRequestPerConnection.removeAll(keepingCapacity: true)
            }
            self.oneRequestPerConnection.insert(host)
        case .http2, .http3:
            guard !self.oneRequestPerConnection.isEmpty else { return }
            self.oneRequestPerConnection.remove(host)
        case .unknown:
            break
        }
    }
}
