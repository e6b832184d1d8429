import NIOCore
import NIOHTTP2

/// Sends PINGs on one HTTP/2 connection and tells when the client acknowledged each: it then has
/// read every frame sent before the PING.
///
/// A stream cut on purpose (`.closeMidBody`, `.events` with `dropAfter`) is reset only after such a
/// round trip. curl before 8.0 drops what it holds of a stream whose `RST_STREAM` arrives in the
/// same read as its last `DATA`, so without it the client would sometimes get nothing of what the
/// route sent. Sits after `NIOHTTP2Handler` in the connection's pipeline, which hands it the frames
/// of stream 0; all on the connection's event loop.
final class HTTP2PingRoundTrip: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private var context: ChannelHandlerContext?
    private var nextPing: UInt64 = 0
    private var waiting: [UInt64: EventLoopPromise<Void>] = [:]

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.failWaiting()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.failWaiting()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        if case .ping(let ping, ack: true) = frame.payload, let promise = self.waiting.removeValue(forKey: ping.integer) {
            promise.succeed()
            return
        }
        context.fireChannelRead(data)
    }

    /// Sends a PING; the future succeeds once the client acknowledged it, and fails when the
    /// connection goes first. Call on the connection's event loop.
    func roundTrip(on eventLoop: EventLoop) -> EventLoopFuture<Void> {
        guard let context = self.context else { return eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        self.nextPing &+= 1
        let promise = context.eventLoop.makePromise(of: Void.self)
        self.waiting[self.nextPing] = promise
        let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: self.nextPing), ack: false))
        context.writeAndFlush(self.wrapOutboundOut(ping), promise: nil)
        return promise.futureResult
    }

    private func failWaiting() {
        let waiting = self.waiting
        self.waiting.removeAll()
        for promise in waiting.values { promise.fail(ChannelError.ioOnClosedChannel) }
    }
}
