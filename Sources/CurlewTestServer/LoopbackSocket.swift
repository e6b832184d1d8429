#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed socket call while setting up the refused or blackhole endpoints.
public struct LoopbackSocketError: Error, CustomStringConvertible, Sendable {
    /// The call that failed, for example `"bind"`.
    public let operation: String
    /// `errno` after the call.
    public let code: Int32

    /// `operation: strerror(code)`.
    public var description: String {
        "\(self.operation): \(String(cString: strerror(self.code)))"
    }
}

/// Bare IPv4 TCP sockets on 127.0.0.1, for the endpoints NIO cannot express (bound but not listening;
/// listening but never accepting).
enum LoopbackSocket {
    /// A TCP socket bound to `127.0.0.1:port` (0: the kernel picks), close-on-exec.
    static func bind(port: UInt16 = 0, nonBlocking: Bool = false) throws -> (descriptor: Int32, port: Int) {
        let descriptor = try makeSocket(nonBlocking: nonBlocking)
        var address = loopbackAddress(port: port)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw LoopbackSocketError(operation: "bind", code: code)
        }
        do {
            return (descriptor, try localPort(of: descriptor))
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    static func makeSocket(nonBlocking: Bool) throws -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let descriptor = socket(AF_INET, type, 0)
        guard descriptor >= 0 else { throw LoopbackSocketError(operation: "socket", code: errno) }
        return descriptor
    }

    static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    static func localPort(of descriptor: Int32) throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else { throw LoopbackSocketError(operation: "getsockname", code: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts a non-blocking connect to `127.0.0.1:port` and waits up to `timeoutMilliseconds` for it to
    /// complete. Returns the connected socket, or `nil` (socket closed) if it did not connect in time.
    static func connect(port: Int, timeoutMilliseconds: Int32) throws -> Int32? {
        let descriptor = try makeSocket(nonBlocking: true)
        var address = loopbackAddress(port: UInt16(truncatingIfNeeded: port))
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result == 0 { return descriptor }
        guard errno == EINPROGRESS else {
            let code = errno
            Glibc.close(descriptor)
            throw LoopbackSocketError(operation: "connect", code: code)
        }
        var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&poller, 1, timeoutMilliseconds)
        var socketError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if ready == 1, getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &length) == 0, socketError == 0 {
            return descriptor
        }
        Glibc.close(descriptor)
        return nil
    }
}
