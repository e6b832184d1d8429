#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOConcurrencyHelpers

/// A 127.0.0.1 port that refuses connections: a socket bound to it that never listens.
///
/// A connect to it gets a RST at once (`ECONNREFUSED`, curl exit 7). Holding the bind is what makes
/// this reliable: no other socket can listen there meanwhile, and the kernel never hands the port out as
/// an ephemeral source port, so a client cannot "self-connect" to it (the TCP simultaneous-open trap of
/// connecting to a merely unused loopback port).
final class RefusingPort: Sendable {
    let port: Int
    private let descriptor: NIOLockedValueBox<Int32?>

    init() throws {
        let bound = try LoopbackSocket.bind()
        self.port = bound.port
        self.descriptor = NIOLockedValueBox(bound.descriptor)
    }

    /// Releases the port (idempotent).
    func close() {
        let descriptor = self.descriptor.withLockedValue { value -> Int32? in
            defer { value = nil }
            return value
        }
        if let descriptor { Glibc.close(descriptor) }
    }

    deinit {
        self.close()
    }
}
