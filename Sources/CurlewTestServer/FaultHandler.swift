#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore

/// Serves ``FaultRoute``s on a raw TCP connection: collects the request head, answers with the
/// fault's bytes (at once, dripped, or not at all), and closes or resets the connection, or leaves
/// it open. No HTTP codec is in the pipeline, so nothing corrects the reply.
final class FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What the listener does for one route.
    enum Script {
        /// Send the bytes, then close (no bytes: close at once).
        case send([UInt8])
        /// Reset the connection: `SO_LINGER` 0, then close.
        case reset
        /// Send the bytes and keep the connection open, silent, until the client closes it.
        case sendThenStall([UInt8])
        /// Send `prefix`, then one byte of `dripped` per interval (its last byte repeats), up to
        /// ``FaultRoute/dripLimit`` bytes; then close.
        case drip(prefix: [UInt8], dripped: [UInt8])
    }

    /// A request head longer than this is answered with 431 and the connection closed.
    private static let headLimit = 64 * 1024
    private var head: [UInt8] = []
    private var answered = false
    private var dripTimer: Scheduled<Void>?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.answered else { return }
        var buffer = self.unwrapInboundIn(data)
        self.head.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
        if let end = self.head.firstRange(of: Array("\r\n\r\n".utf8)) {
            self.answered = true
            self.answer(context: context, requestLine: self.head[..<end.lowerBound])
        } else if self.head.count > Self.headLimit {
            self.answered = true
            self.run(.send(Array("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n".utf8)),
                     context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.dripTimer?.cancel()
        self.dripTimer = nil
        context.fireChannelInactive()
    }

    private func answer(context: ChannelHandlerContext, requestLine head: ArraySlice<UInt8>) {
        let firstLine = head.split(separator: UInt8(ascii: "\r"), maxSplits: 1).first ?? []
        let words = firstLine.split(separator: UInt8(ascii: " "))
        let path = words.count >= 2 ? Substring(decoding: words[1], as: UTF8.self) : ""
        guard let route = FaultRoute(path: path) else {
            self.run(.send(Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)),
                     context: context)
            return
        }
        self.run(Self.script(for: route), context: context)
    }

    private func run(_ script: Script, context: ChannelHandlerContext) {
        let channel = context.channel
        switch script {
        case .send(let bytes):
            guard !bytes.isEmpty else {
                context.close(promise: nil)
                return
            }
            context.writeAndFlush(self.wrapOutboundOut(channel.allocator.buffer(bytes: bytes))).whenComplete { _ in
                channel.close(promise: nil)
            }
        case .reset:
            guard let provider = channel as? SocketOptionProvider else {
                context.close(promise: nil)
                return
            }
            provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        case .sendThenStall(let bytes):
            context.writeAndFlush(self.wrapOutboundOut(channel.allocator.buffer(bytes: bytes)), promise: nil)
        case .drip(let prefix, let dripped):
            context.writeAndFlush(self.wrapOutboundOut(channel.allocator.buffer(bytes: prefix)), promise: nil)
            self.drip(dripped, sent: 0, context: context)
        }
    }

    private func drip(_ dripped: [UInt8], sent: Int, context: ChannelHandlerContext) {
        guard sent < FaultRoute.dripLimit, let last = dripped.last else {
            context.close(promise: nil)
            return
        }
        let delay = TimeAmount.milliseconds(FaultRoute.dripIntervalMilliseconds)
        self.dripTimer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
            self.dripTimer = nil
            let byte = sent < dripped.count ? dripped[sent] : last
            context.writeAndFlush(self.wrapOutboundOut(context.channel.allocator.buffer(bytes: [byte])), promise: nil)
            self.drip(dripped, sent: sent + 1, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: The faults

    static func script(for route: FaultRoute) -> Script {
        switch route {
        case .acceptThenClose, .emptyReply:
            return .send([])
        case .reset:
            return .reset
        case .shortBody:
            return .send(Array("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".utf8) + Array(repeating: UInt8(ascii: "x"), count: 500))
        case .badStatusLine:
            return .send(Array("HTTP/1.1 abc\r\nContent-Length: 0\r\n\r\n".utf8))
        case .oversizedHeaderLine:
            return .send(Array("HTTP/1.1 200 OK\r\nX-Oversized: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 1 << 20)
                         + Array("\r\nContent-Length: 0\r\n\r\n".utf8))
        case .manyHeaders:
            var reply = Array("HTTP/1.1 200 OK\r\n".utf8)
            for index in 0..<10_000 {
                // "X-Header-00042: value\r\n" is 24 bytes (index zero-padded to five digits).
                let digits = String(index)
                reply += Array("X-Header-\(String(repeating: "0", count: 5 - digits.count))\(digits): value\r\n".utf8)
            }
            return .send(reply + Array("Content-Length: 0\r\n\r\n".utf8))
        case .invalidChunked:
            return .send(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n".utf8))
        case .dripHead:
            return .drip(prefix: [], dripped: Array("HTTP/1.1 200 OK\r\nX-Drip: a".utf8))
        case .stallHead:
            return .sendThenStall(Array("HTTP/1.1 2".utf8))
        case .dripBody:
            return .drip(prefix: Array("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n".utf8), dripped: [UInt8(ascii: "b")])
        case .stallBody:
            return .sendThenStall(Array("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789".utf8))
        case .gzipBomb:
            return .send(Self.encodedHead(encoding: "gzip", length: GzipBomb.single.count) + GzipBomb.single)
        case .doubleGzipBomb:
            return .send(Self.encodedHead(encoding: "gzip, gzip", length: GzipBomb.double.count) + GzipBomb.double)
        case .conflictingLengths:
            return .send(Self.framed("Content-Length: 5\r\nContent-Length: 8"))
        case .conflictingLengthList:
            return .send(Self.framed("Content-Length: 5, 8"))
        case .overflowingLength:
            return .send(Self.framed("Content-Length: 100000000000000000000000"))
        case .negativeLength:
            return .send(Self.framed("Content-Length: -1"))
        case .junkLength:
            return .send(Self.framed("Content-Length: 12abc", body: "abcdefghijkl"))
        case .emptyLength:
            return .send(Self.framed("Content-Length:"))
        case .chunkedWithLength:
            return .send(Self.framed("Transfer-Encoding: chunked\r\nContent-Length: 3", body: "8\r\nabcdefgh\r\n0\r\n\r\n"))
        case .repeatedLengths:
            return .send(Self.framed("Content-Length: 8\r\nContent-Length: 8"))
        case .repeatedLengthList:
            return .send(Self.framed("Content-Length: 8, 8"))
        }
    }

    /// A 200 with `framing` as its framing header lines, then `body`.
    private static func framed(_ framing: String, body: String = "abcdefgh") -> [UInt8] {
        Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\(framing)\r\n\r\n\(body)".utf8)
    }

    private static func encodedHead(encoding: String, length: Int) -> [UInt8] {
        Array(("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Encoding: \(encoding)\r\n"
               + "Content-Length: \(length)\r\n\r\n").utf8)
    }
}

/// Closes every connection as soon as it is accepted (``FaultRoute/acceptThenClose``).
final class CloseOnAcceptHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    func channelActive(context: ChannelHandlerContext) {
        context.close(promise: nil)
    }
}
