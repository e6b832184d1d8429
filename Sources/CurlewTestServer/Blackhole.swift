#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A 127.0.0.1 port where connects hang: for clients' connect-timeout tests.
///
/// The trick: a listener with backlog 0 whose accept queue is filled by a connection of our own that is
/// never accepted. Linux drops a SYN that arrives while the accept queue is full (it does not answer with
/// RST), so a further client stays in SYN-SENT, retransmitting its SYN until its own timeout fires
/// (`curl --connect-timeout 1` exits 28). With backlog 0 Linux queues exactly one connection; the setup
/// does not rely on that number: it keeps connecting fillers until a probe fails to connect within
/// 100 ms, which proves the queue is full.
///
/// One blackhole serves the whole process (``shared``): it costs that one 100 ms probe, and holds a
/// few descriptors until the process exits.
final class Blackhole: Sendable {
    /// The process-wide blackhole, made on first use.
    static let shared: Result<Blackhole, any Error> = Result { try Blackhole() }

    let port: Int
    private let listener: Int32
    private let fillers: [Int32]

    private init() throws {
        let bound = try LoopbackSocket.bind()
        guard listen(bound.descriptor, 0) == 0 else {
            let code = errno
            close(bound.descriptor)
            throw LoopbackSocketError(operation: "listen", code: code)
        }
        var fillers: [Int32] = []
        while fillers.count < 16 {
            guard let filler = try LoopbackSocket.connect(port: bound.port, timeoutMilliseconds: 100) else {
                break
            }
            fillers.append(filler)
        }
        self.listener = bound.descriptor
        self.port = bound.port
        self.fillers = fillers
    }
}
