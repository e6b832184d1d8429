import CurlewTransport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.1 responder on a Linux abstract Unix socket (a name, not a file): nginx and
/// SwiftNIO take socket paths only. Each connection gets one `200` with ``body`` and
/// `Connection: close`; ``requestHeads`` keeps what arrived. It serves on a thread of its own until
/// ``close()``.
///
/// Safety: `@unchecked Sendable` because the mutable record is behind `heads` (a lock) and the
/// listening descriptor is only closed once, under the same lock.
public final class AbstractSocketResponder: @unchecked Sendable {
    private let listener: Int32
    private let heads = Locked<[String]>([])
    private let closed = Locked(false)

    /// The request heads received so far, in order.
    public var requestHeads: [String] { self.heads.value }

    /// Listens on the abstract socket `name` and starts serving.
    ///
    /// - Throws: ``ExternalServer/Failure`` when the socket cannot be bound.
    public init(name: String, body: String) throws {
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw ExternalServer.Failure(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [0] + Array(name.utf8)
        guard bytes.count <= MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(listener)
            throw ExternalServer.Failure(description: "the abstract socket name is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 }
        }
        guard bound, listen(listener, 16) == 0 else {
            Glibc.close(listener)
            throw ExternalServer.Failure(description: "could not listen on @\(name): errno \(errno)")
        }
        self.listener = listener
        let response = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        let thread = Thread { [heads] in
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }  // closed
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while received.count < 65_536 {
                    let count = read(connection, &buffer, buffer.count)
                    guard count > 0 else { break }
                    received += buffer[0..<count]
                    if received.count >= 4, Array(received.suffix(4)) == Array("\r\n\r\n".utf8) { break }
                }
                heads.withLock { $0.append(String(decoding: received, as: UTF8.self)) }
                _ = response.utf8CString.withUnsafeBufferPointer { write(connection, $0.baseAddress, $0.count - 1) }
                Glibc.close(connection)
            }
        }
        thread.name = "AbstractSocketResponder"
        thread.start()
    }

    deinit {
        self.close()
    }

    /// Stops serving: the listening socket is shut down and closed, which ends the thread's `accept`.
    public func close() {
        let listener = self.listener
        self.closed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            shutdown(listener, Int32(SHUT_RDWR))
            Glibc.close(listener)
        }
    }
}
