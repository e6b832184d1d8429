// Checks CurlewTestServer itself, without curl or Curlew: raw sockets against the plain listener.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

@Suite("TestServer")
struct TestServerTests {
    @Test("every listener is bound to 127.0.0.1 only")
    func listenersAreLoopbackOnly() async throws {
        let server = try TestServer.start()
        let ports = [server.port, server.tlsPort, server.h2cPort]
        #expect(ports.allSatisfy { $0 > 0 })
        #expect(Set(ports).count == 3)

        // /proc/net/tcp is no snapshot: while other sockets come and go, one read can miss a row.
        // So read until every port has been seen, and check every address seen for it.
        var addresses: [Int: Set<String>] = [:]
        for _ in 0..<20 where !ports.allSatisfy({ addresses[$0] != nil }) {
            for listener in try listeningSockets() where ports.contains(listener.port) {
                addresses[listener.port, default: []].insert(listener.address)
            }
        }
        for port in ports {
            #expect(addresses[port] == ["0100007F"], "port \(port) listens on \(addresses[port] ?? [])")
        }
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
        #expect(server.url(.bytes(13), tls: true).absoluteString == "https://127.0.0.1:\(server.tlsPort)/bytes/13")
        #expect(server.h2cURL(path: "json").absoluteString == "http://127.0.0.1:\(server.h2cPort)/json")
        #expect(FileManager.default.fileExists(atPath: TestServer.caCertificatePath))
        await server.shutdownGracefully()
    }

    @Test("GET .bytes(100) returns the deterministic body, on a kept-alive connection")
    func bytes() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let connection = try RawConnection(port: server.port)
        for _ in 0..<2 {
            let response = try connection.send("GET \(Route.bytes(100).path) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(response.status == 200)
            #expect(response.header("content-length") == "100")
            #expect(response.body == TestServer.expectedBody(count: 100))
        }
        let stats = server.stats
        #expect(stats.plainConnectionsAccepted == 1)
        #expect(stats.requestsServed == 2)
        #expect(stats.http1Requests == 2)
        await server.shutdownGracefully()
    }

    @Test("a single Range gives 206 with the right slice; past the end gives 416")
    func range() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let route = Route.entity(bytes: 1000)
        let connection = try RawConnection(port: server.port)

        let partial = try connection.send("GET \(route.path) HTTP/1.1\r\nHost: x\r\nRange: bytes=100-199\r\n\r\n")
        #expect(partial.status == 206)
        #expect(partial.header("content-range") == "bytes 100-199/1000")
        #expect(partial.header("etag") == route.entityETag)
        #expect(partial.body == TestServer.expectedBody(count: 100, offset: 100))

        let stale = try connection.send(
            "GET \(route.path) HTTP/1.1\r\nHost: x\r\nRange: bytes=100-199\r\nIf-Range: \"old\"\r\n\r\n"
        )
        #expect(stale.status == 200)
        #expect(stale.body == TestServer.expectedBody(count: 1000))

        let beyond = try connection.send("GET \(route.path) HTTP/1.1\r\nHost: x\r\nRange: bytes=1000-\r\n\r\n")
        #expect(beyond.status == 416)
        #expect(beyond.header("content-range") == "bytes */1000")
        await server.shutdownGracefully()
    }

    @Test("a tagged request is recorded: its Range and If-Range, the status answered, whether the client stayed")
    func taggedRequests() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let port = server.port
        let path = Route.entity(bytes: 1000).path
        let tag = TestServer.tagHeaderName
        let statuses = try await onThreadOfItsOwn { () -> [Int] in
            let connection = try RawConnection(port: port)
            let ranged = try connection.send(
                "GET \(path) HTTP/1.1\r\nHost: x\r\nRange: bytes=100-\r\nIf-Range: \"v1\"\r\n\(tag): ranged\r\n\r\n")
            let untagged = try connection.send("GET /bytes/1 HTTP/1.1\r\nHost: x\r\n\r\n")
            return [ranged.status, untagged.status]
        }
        #expect(statuses == [206, 200])
        #expect(server.requests(tagged: "ranged") == [
            TaggedRequest(method: "GET", target: path, range: "bytes=100-", ifRange: "\"v1\"", status: 206, outcome: .answered),
        ])

        // A client that closes its connection while the answer is delayed has abandoned it.
        try await onThreadOfItsOwn {
            try RawConnection(port: port).sendWithoutReading("GET /delay/120000 HTTP/1.1\r\nHost: x\r\n\(tag): left\r\n\r\n")
        }
        #expect(await waitUntil { server.requests(tagged: "left").first?.outcome == .abandoned })
        #expect(server.requests(tagged: "left").count == 1)
        #expect(server.requests(tagged: "left").first?.status == nil, "no head was written")
        #expect(server.requests(tagged: "nobody").isEmpty)
        await server.shutdownGracefully()
    }

    @Test("an entity with holdFirst holds the first request of its tag after one piece until the client leaves; the next drips through")
    func entityHoldsTheFirstRequestOfItsTag() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let port = server.port
        let route = Route.entity(bytes: 3000, dripChunkSize: 1000, dripIntervalMilliseconds: 10, holdFirst: true)
        let request = "GET \(route.path) HTTP/1.1\r\nHost: x\r\n\(TestServer.tagHeaderName): held\r\n\r\n"
        let leave = DispatchSemaphore(value: 0)
        let first = Task {
            try await onThreadOfItsOwn {
                let connection = try RawConnection(port: port)
                try connection.sendWithoutReading(request)
                _ = leave.wait(timeout: .now() + 30)  // the connection closes when it goes
            }
        }
        #expect(await waitUntil { server.requests(tagged: "held").first?.status == 200 }, "no head written")
        // Ten times the drip interval: a drip without the hold would long have finished.
        #expect(await holdsThroughout(.milliseconds(300)) { server.requests(tagged: "held").first?.outcome == .answering })
        leave.signal()
        try await first.value
        #expect(await waitUntil { server.requests(tagged: "held").first?.outcome == .abandoned })

        let second = try await onThreadOfItsOwn { () -> (Int, [UInt8]) in
            let response = try RawConnection(port: port).send(request)
            return (response.status, response.body)
        }
        #expect(second.0 == 200)
        #expect(second.1 == TestServer.expectedBody(count: 3000))
        #expect(server.requests(tagged: "held").map(\.outcome) == [.abandoned, .answered])
        await server.shutdownGracefully()
    }

    @Test("echo counts and hashes the uploaded body")
    func echo() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let body = Array(repeating: UInt8(ascii: "x"), count: 100_000)
        let connection = try RawConnection(port: server.port)
        let response = try connection.send(
            "POST /echo?a=1 HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n", body: body
        )
        let reply = try JSONDecoder().decode(EchoReply.self, from: Data(response.body))
        #expect(reply.method == "POST")
        #expect(reply.path == "/echo")
        #expect(reply.query == "a=1")
        #expect(reply.bodyLength == body.count)
        #expect(reply.bodyChecksum == FNV1a64.hex(TestServer.checksum(body)))
        #expect(reply.headerValues("host") == ["x"])
        #expect(FNV1a64.hex(TestServer.checksum(Array("hello".utf8))) == "a430d84680aabd0b")
        await server.shutdownGracefully()
    }

    @Test("unknown paths give 404, bad parameters 400")
    func errors() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let connection = try RawConnection(port: server.port)
        #expect(try connection.send("GET /no/such/route HTTP/1.1\r\nHost: x\r\n\r\n").status == 404)
        #expect(try connection.send("GET /bytes/-1 HTTP/1.1\r\nHost: x\r\n\r\n").status == 400)
        #expect(try connection.send("GET /status/99999999999999999999999 HTTP/1.1\r\nHost: x\r\n\r\n").status == 400)
        #expect(try connection.send("GET /entity/10?version=0 HTTP/1.1\r\nHost: x\r\n\r\n").status == 400)
        #expect(try connection.send("GET /redirect-to?url=%zz HTTP/1.1\r\nHost: x\r\n\r\n").status == 302)
        // Absurd numbers are refused, never trapped on.
        for path in [
            "/delay/99999999999999", "/entity/10?version=999999999999", "/chunked/10?chunk=999999999999",
            "/drip?bytes=1&interval=99999999999999", "/entity/5?drip=0", "/huge-headers/99999", "/bytes/",
            "/redirect/1?status=200", "/redirect-to", "/status/+200",
        ] {
            #expect(try connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n").status == 400, "\(path)")
        }
        #expect(try connection.send("GET /% HTTP/1.1\r\nHost: x\r\n\r\n").status == 404)
        #expect(try connection.send("GET http://example.com/bytes/3?x#y HTTP/1.1\r\nHost: x\r\n\r\n").body.count == 3)
        #expect(try connection.send("GET /drip?bytes=5&chunks=0 HTTP/1.1\r\nHost: x\r\n\r\n").body.count == 5)
        await server.shutdownGracefully()
    }

    @Test("refusedURL refuses at once; blackholeURL leaves the connect hanging")
    func unreachable() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        #expect(server.refusedURL.host == "127.0.0.1")
        #expect(try await onThreadOfItsOwn { try connectOutcome(port: server.refusedURL.port ?? 0, waitMilliseconds: 2_000) } == ECONNREFUSED)
        #expect(try await onThreadOfItsOwn { try connectOutcome(port: server.blackholeURL.port ?? 0, waitMilliseconds: 300) } == ETIMEDOUT)
        await server.shutdownGracefully()
    }

    @Test("shutdown is idempotent and frees the port")
    func shutdown() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let port = server.port
        await server.shutdownGracefully()
        await server.shutdownGracefully()
        #expect(try await onThreadOfItsOwn { try connectOutcome(port: port, waitMilliseconds: 2_000) } == ECONNREFUSED)
    }
}

// MARK: - Raw socket helpers

/// A blocking HTTP/1.1 connection to 127.0.0.1 that reads `Content-Length` framed responses, or
/// everything until the server closes.
///
/// Safety: `@unchecked Sendable` because a test uses it from one thread at a time (each call blocks
/// until done), handing it on between calls; nothing runs on it concurrently.
final class RawConnection: @unchecked Sendable {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            self.headers.first { $0.0.lowercased() == name }?.1
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        self.descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard self.descriptor >= 0 else { throw Failure(description: "socket: \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(self.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(self.descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(self.descriptor)
            throw Failure(description: "connect: \(errno)")
        }
    }

    deinit {
        close(self.descriptor)
    }

    /// Sends a request without reading the response.
    func sendWithoutReading(_ head: String, body: [UInt8] = []) throws {
        let bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(self.descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw Failure(description: "write: \(errno)") }
            sent += count
        }
    }

    func send(_ head: String, body: [UInt8] = []) throws -> Response {
        try self.sendWithoutReading(head, body: body)
        return try self.receive()
    }

    /// Reads one `Content-Length` framed response.
    func receive() throws -> Response {
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = self.buffer.firstRange(of: separator)?.upperBound
            if headEnd == nil { try self.fill() }
        }
        let headLength = headEnd ?? 0
        let lines = String(decoding: self.buffer[..<headLength], as: UTF8.self)
            .split(separator: "\r\n").map(String.init)
        guard let statusLine = lines.first, statusLine.count >= 12,
            let status = Int(statusLine.dropFirst(9).prefix(3))
        else { throw Failure(description: "bad status line") }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
        while self.buffer.count < headLength + length {
            try self.fill()
        }
        let body = Array(self.buffer[headLength..<(headLength + length)])
        self.buffer.removeFirst(headLength + length)
        return Response(status: status, headers: headers, body: body)
    }

    /// Every byte until the server closes the connection (or resets it), unparsed.
    func readUntilClosed() throws -> [UInt8] {
        while try self.fill(allowingEnd: true) {}
        defer { self.buffer.removeAll() }
        return self.buffer
    }

    /// Reads what is there into the buffer; `false` at the end of the stream when `allowingEnd`.
    @discardableResult
    private func fill(allowingEnd: Bool = false) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { read(self.descriptor, $0.baseAddress, $0.count) }
        if allowingEnd, count == 0 || (count < 0 && errno == ECONNRESET) { return false }
        guard count > 0 else { throw Failure(description: "read: \(count) errno \(errno)") }
        self.buffer += chunk[..<count]
        return true
    }
}

private func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
    return address
}

/// Starts a non-blocking connect and reports how it ended: 0 (connected), an errno, or `ETIMEDOUT`
/// when still pending after `waitMilliseconds`.
private func connectOutcome(port: Int, waitMilliseconds: Int32) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var address = loopback(port: port)
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    if result == 0 { return 0 }
    guard errno == EINPROGRESS else { return errno }
    var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
    guard poll(&poller, 1, waitMilliseconds) == 1 else { return ETIMEDOUT }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
    return error
}

/// Local address (hex, as the kernel prints it) and port of every IPv4 and IPv6 TCP listener.
private func listeningSockets() throws -> [(address: String, port: Int)] {
    var sockets: [(String, Int)] = []
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let table = ProcessInspector.readProcFile(file) else { continue }
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // State 0A is LISTEN.
            guard fields.count > 3, fields[3] == "0A" else { continue }
            let local = fields[1].split(separator: ":")
            guard local.count == 2, let port = Int(local[1], radix: 16) else { continue }
            sockets.append((String(local[0]), port))
        }
    }
    return sockets
}
