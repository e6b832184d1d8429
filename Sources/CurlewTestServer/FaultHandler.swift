import NIOCore

/// Serves ``FaultRoute``s on a raw TCP connection: collects the request head, answers with the
/// fault's bytes, and closes. No HTTP codec is in the pipeline, so nothing corrects the reply.
final class FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A request head longer than this is answered with 431 and the connection closed.
    private static let headLimit = 64 * 1024
    private var head: [UInt8] = []
    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.answered else { return }
        var buffer = self.unwrapInboundIn(data)
        self.head.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
        if let end = self.head.firstRange(of: Array("\r\n\r\n".utf8)) {
            self.answered = true
            self.answer(context: context, requestLine: self.head[..<end.lowerBound])
        } else if self.head.count > Self.headLimit {
            self.answered = true
            self.send(Array("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n".utf8), context: context)
        }
    }

    private func answer(context: ChannelHandlerContext, requestLine head: ArraySlice<UInt8>) {
        let firstLine = head.split(separator: UInt8(ascii: "\r"), maxSplits: 1).first ?? []
        let words = firstLine.split(separator: UInt8(ascii: " "))
        let path = words.count >= 2 ? Substring(decoding: words[1], as: UTF8.self) : ""
        guard let route = FaultRoute(path: path) else {
            self.send(Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8), context: context)
            return
        }
        self.send(route.reply, context: context)
    }

    private func send(_ bytes: [UInt8], context: ChannelHandlerContext) {
        guard !bytes.isEmpty else {
            context.close(promise: nil)
            return
        }
        let channel = context.channel
        let buffer = channel.allocator.buffer(bytes: bytes)
        context.writeAndFlush(self.wrapOutboundOut(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
