import CurlewTransport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connected pair of non-blocking `AF_UNIX` stream sockets for driving a scheduler without curl:
/// hand ``local`` to the scheduler (which then owns and closes it) and make it readable, writable
/// or hung up through ``peer``, which the test closes.
///
/// ```swift
/// let pair = try SocketPair()
/// scheduler.perform { scheduler.setInterest(.read, for: pair.local) }
/// try pair.sendFromPeer()            // `local` becomes readable
/// ```
public struct SocketPair: Sendable {
    /// The end to watch. Once given to a scheduler, only the scheduler closes it.
    public let local: Int32
    /// The other end, owned by the test.
    public let peer: Int32

    /// Creates a pair, both ends non-blocking and close-on-exec.
    ///
    /// - Parameter localAtOrAbove: If given, ``local`` is moved to the lowest free descriptor
    ///   number at or above it (`F_DUPFD_CLOEXEC`). Other threads take the lowest free numbers, so a
    ///   test that checks "descriptor N is closed" or "the new socket got number N again" stays
    ///   deterministic when it works above the numbers the rest of the process uses.
    /// - Throws: ``POSIXCallError`` if a system call fails.
    public init(localAtOrAbove minimum: Int32? = nil) throws(POSIXCallError) {
        var descriptors: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &descriptors) == 0 else {
            throw POSIXCallError(call: "socketpair", errno: errno)
        }
        var local = descriptors[0]
        if let minimum {
            let moved = fcntl(local, F_DUPFD_CLOEXEC, minimum)
            let failure = errno
            _ = close(local)
            guard moved >= 0 else {
                _ = close(descriptors[1])
                throw POSIXCallError(call: "fcntl(F_DUPFD_CLOEXEC, \(minimum))", errno: failure)
            }
            local = moved
        }
        self.local = local
        self.peer = descriptors[1]
    }

    /// Sends `count` bytes from ``peer``, making ``local`` readable. `MSG_NOSIGNAL`: sending to a
    /// closed ``local`` fails with `EPIPE` instead of killing the test process with `SIGPIPE`.
    public func sendFromPeer(count: Int = 1) throws(POSIXCallError) {
        let bytes = [UInt8](repeating: 0x2A, count: count)
        let sent = bytes.withUnsafeBytes { send(self.peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == count else { throw POSIXCallError(call: "send", errno: sent < 0 ? errno : 0) }
    }

    /// Closes ``peer``; ``local`` then sees end of file (readable) and hang-up.
    public func closePeer() {
        _ = close(self.peer)
    }

    /// Reads and discards everything `descriptor` has buffered, up to end of file or `EAGAIN`.
    /// - Returns: The number of bytes read.
    @discardableResult
    public static func drain(_ descriptor: Int32) -> Int {
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                total += count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return total
            }
        }
    }

    /// Writes into `descriptor` until its send buffer is full, so it stops being writable until the
    /// other end reads.
    /// - Returns: The number of bytes written.
    @discardableResult
    public static func fillSendBuffer(of descriptor: Int32) -> Int {
        var total = 0
        let chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                total += count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return total
            }
        }
    }
}

/// The socket pairs one test makes as it goes, whose peers it closes together at its end — or when
/// the set is released, for a test that threw before its end. The local ends are the scheduler's.
///
/// ```swift
/// let sockets = SocketPairs(localAtOrAbove: 4096)
/// let pair = try sockets.make()
/// // … hand pair.local to the scheduler, shut it down …
/// sockets.closePeers()
/// ```
public final class SocketPairs: Sendable {
    private let minimum: Int32?
    private let peers = Locked<[Int32]>([])

    /// - Parameter minimum: Where each pair's local end is moved (see ``SocketPair/init(localAtOrAbove:)``).
    public init(localAtOrAbove minimum: Int32? = nil) {
        self.minimum = minimum
    }

    deinit {
        self.closePeers()
    }

    /// A new pair whose peer ``closePeers()`` closes.
    public func make() throws(POSIXCallError) -> SocketPair {
        let pair = try SocketPair(localAtOrAbove: self.minimum)
        self.peers.withLock { $0.append(pair.peer) }
        return pair
    }

    /// `count` new pairs, as ``make()`` makes them.
    public func make(_ count: Int) throws(POSIXCallError) -> [SocketPair] {
        var pairs: [SocketPair] = []
        for _ in 0..<count {
            pairs.append(try self.make())
        }
        return pairs
    }

    /// Closes the peer of every pair made so far (each once).
    public func closePeers() {
        let peers = self.peers.withLock { peers in
            defer { peers = [] }
            return peers
        }
        for peer in peers {
            _ = close(peer)
        }
    }
}

/// A failed system call in test support code.
public struct POSIXCallError: Error, CustomStringConvertible, Sendable {
    /// The call that failed, e.g. `"socketpair"`.
    public var call: String
    /// `errno` after the call.
    public var errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(self.call) failed: \(String(cString: strerror(self.errno)))"
    }
}
