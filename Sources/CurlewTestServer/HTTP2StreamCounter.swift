import NIOCore
import NIOHTTP2

/// Counts the streams open at once on one HTTP/2 connection and reports the peak to the stats.
///
/// NIOHTTP2 calls the delegate on the connection's event loop, so the count lives in a loop-bound box:
/// no lock, and a wrong-thread access would trap in debug builds rather than race.
final class HTTP2StreamCounter: NIOHTTP2StreamDelegate {
    private let open: NIOLoopBoundBox<Int>
    private let stats: StatsRecorder

    init(eventLoop: EventLoop, stats: StatsRecorder) {
        self.open = NIOLoopBoundBox(0, eventLoop: eventLoop)
        self.stats = stats
    }

    func streamCreated(_ id: HTTP2StreamID, channel: Channel) {
        self.open.value += 1
        self.stats.concurrentStreamsObserved(self.open.value)
    }

    func streamClosed(_ id: HTTP2StreamID, channel: Channel) {
        self.open.value -= 1
    }
}
