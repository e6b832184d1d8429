import CurlewTransport
import Dispatch

/// What ``DispatchScheduler`` holds for one socket: a read source and, once curl asks for writing, a
/// write source, kept (armed or disarmed) until the socket is closed.
///
/// **The write source is only created after the read source is registered with epoll.** libdispatch
/// on Linux (checked on Swift 6.3.1) keeps one epoll registration per descriptor for both
/// directions, and when it registers a read source while a write source on that descriptor has
/// `EPOLLOUT` armed, `_dispatch_unote_register_muxed` files the read source among the *writers*: it
/// never fires for incoming data and fires on every writability instead. curl's usual order is
/// exactly that (OUT while connecting or sending, then IN), so a read source created when first
/// asked for would lose responses. Creating it first is not enough either: registration happens
/// later, when libdispatch first runs the source, and a source suspended before that is registered
/// only when resumed. So the read source is created with the watch, stays armed until its
/// registration handler has run (its events are dropped meanwhile unless reading was asked for),
/// and only then may it be suspended and may the write source be created. Probes: registered in
/// this order, 500 of 500 trials delivered the read event; created reader-first but suspended at
/// once from a block on the queue, 93–170 of 500 did.
///
/// Confined to the scheduler's queue.
final class SocketWatch {
    /// The watched descriptor.
    let socket: Int32
    /// The directions curl asked for last; the armed directions equal it once the read source is
    /// registered (until then the read source is armed and unwanted events are dropped).
    private(set) var interest: SocketInterest = []
    private var reader: ArmableSource?
    private var writer: ArmableSource?
    private var readerIsRegistered = false

    init(socket: Int32) {
        self.socket = socket
    }

    /// How many sources exist for the socket (each runs one cancel handler when cancelled).
    var sourceCount: Int {
        (self.reader == nil ? 0 : 1) + (self.writer == nil ? 0 : 1)
    }

    /// Arms exactly the directions in `interest` and disarms the others, creating missing sources
    /// with `makeSource` (which returns them activated, so armed): the read source at the first
    /// non-empty interest, the write source when writing is asked for and the read source is
    /// registered.
    func apply(_ interest: SocketInterest, makeSource: (SocketInterest) -> ArmableSource) {
        self.interest = interest
        if self.reader == nil {
            guard !interest.isEmpty else { return }  // nothing asked, nothing to build yet
            self.reader = makeSource(.read)
        }
        guard self.readerIsRegistered, let reader = self.reader else { return }
        if interest.contains(.read) { reader.arm() } else { reader.disarm() }
        if interest.contains(.write) {
            if let writer = self.writer {
                writer.arm()
            } else {
                self.writer = makeSource(.write)
            }
        } else {
            self.writer?.disarm()
        }
    }

    /// Called from the read source's registration handler: applies what was postponed.
    func readerDidRegister(makeSource: (SocketInterest) -> ArmableSource) {
        guard !self.readerIsRegistered, self.reader != nil else { return }
        self.readerIsRegistered = true
        self.apply(self.interest, makeSource: makeSource)
    }

    /// Cancels every source; their cancel handlers run later on the scheduler's queue.
    func cancelSources() {
        self.interest = []
        self.reader?.cancel()
        self.writer?.cancel()
        self.reader = nil
        self.writer = nil
    }
}
