import CurlewTransport
internal import CoreFoundation
internal import Glibc

/// Watches sockets the classic way: one `CFSocket` per descriptor, its run-loop source in every
/// mode of the scheduler.
///
/// CoreFoundation on Linux watches every CFSocket of the process from one helper thread that
/// `select()`s over all of them and signals the sources, so each event crosses two threads. CF names
/// it `com.apple.CFSocket.private`, which Linux rejects (more than 15 bytes): it keeps the name of the
/// thread that created the first CFSocket, typically the network thread's. The pitfalls handled here:
///
/// - `kCFSocketCloseOnInvalidate` is on by default: cleared, so CF never closes a descriptor behind
///   the scheduler's back; the scheduler closes it itself, after invalidating.
/// - `kCFSocketLeaveErrors` is set: otherwise CF reads (and so clears) `SO_ERROR` on each write
///   event and *skips* the write callout when it was non-zero, hiding a failed connect from curl.
/// - CF re-enables only the read callback after it fires; the write callback is re-enabled here
///   after each write event while write is still wanted.
/// - Scheduling the source force-enables every callback, so the source is added first and the
///   unwanted directions are disabled afterwards.
/// - `CFSocketCreateWithNative` returns the *existing* CFSocket (with its old context) for a
///   descriptor number CF still tracks; the context is checked and a stale socket is invalidated
///   (without closing the descriptor) before creating again.
/// - An empty interest keeps the CFSocket with both callbacks disabled: curl parks pooled
///   connections with `CURL_POLL_REMOVE` and re-arms them for the next request.
///
/// Confined to the network thread.
final class CFSocketWatcher: SocketWatcher {
    private let slot: HandlerSlot
    private let loop: CFRunLoop
    private let modeNames: [CFString]
    private let reportFailure: (Int32) -> Void
    private var watches: [Int32: CFSocketWatch] = [:]
    private(set) var armedCount = 0

    var watchedCount: Int { self.watches.count }

    /// - Parameters:
    ///   - reportFailure: Called (on the thread) with a socket CF could not watch; the scheduler
    ///     then reports an error for it later, never from inside `setInterest`.
    init(loop: CFRunLoop, modeNames: [CFString], slot: HandlerSlot, reportFailure: @escaping (Int32) -> Void) {
        self.loop = loop
        self.modeNames = modeNames
        self.slot = slot
        self.reportFailure = reportFailure
    }

    func setInterest(_ interest: SocketInterest, for socket: Int32) {
        guard socket >= 0 else { return }
        if let watch = self.watches[socket] {
            let before = watch.interest
            watch.arm(interest)
            if before.isEmpty != interest.isEmpty { self.armedCount += interest.isEmpty ? -1 : 1 }
            return
        }
        guard let watch = CFSocketWatch(socket: socket, slot: self.slot, loop: self.loop, modeNames: self.modeNames)
        else {
            if !interest.isEmpty { self.reportFailure(socket) }
            return
        }
        self.watches[socket] = watch
        watch.arm(interest)
        if !interest.isEmpty { self.armedCount += 1 }
    }

    func close(socket: Int32) {
        if let watch = self.watches.removeValue(forKey: socket) {
            if !watch.interest.isEmpty { self.armedCount -= 1 }
            watch.invalidate()
        }
        if socket >= 0 { Glibc.close(socket) }
    }

    func isArmed(_ socket: Int32) -> Bool {
        !(self.watches[socket]?.interest.isEmpty ?? true)
    }

    func tearDown() {
        for (socket, watch) in self.watches {
            watch.invalidate()
            Glibc.close(socket)
        }
        self.watches = [:]
        self.armedCount = 0
    }
}

/// One descriptor's `CFSocket` and run-loop source. Its callout finds it through the CFSocket's
/// context `info`, set once; CF holds a reference to it until the CFSocket is invalidated.
final class CFSocketWatch {
    private static let readCallBack = CFSocketCallBackType.readCallBack.rawValue
    private static let writeCallBack = CFSocketCallBackType.writeCallBack.rawValue
    // CFSocket's flag bits (an anonymous CF_ENUM the Swift importer does not expose).
    private static let leaveErrors: CFOptionFlags = 64
    private static let closeOnInvalidate: CFOptionFlags = 128

    let socket: Int32
    /// The directions armed now (equal to the last interest set).
    private(set) var interest: SocketInterest = []
    private let slot: HandlerSlot
    private var cfSocket: CFSocket?
    private var source: CFRunLoopSource?

    /// Creates the CFSocket for `socket` and adds its source to `loop`, with no direction armed.
    init?(socket: Int32, slot: HandlerSlot, loop: CFRunLoop, modeNames: [CFString]) {
        self.socket = socket
        self.slot = slot

        guard let cfSocket = self.makeCFSocket(),
            let source = CFSocketCreateRunLoopSource(kCFAllocatorDefault, cfSocket, 0)
        else {
            self.invalidate()
            return nil
        }
        self.cfSocket = cfSocket
        self.source = source
        // Adding the source schedules the socket, which force-enables every callback: add first,
        // then disable both directions; `arm(_:)` enables what is wanted.
        for mode in modeNames { CFRunLoopAddSource(loop, source, mode) }
        CFSocketDisableCallBacks(cfSocket, Self.readCallBack | Self.writeCallBack)
    }

    private func makeCFSocket() -> CFSocket? {
        let info = Unmanaged.passUnretained(self).toOpaque()
        var context = CFSocketContext(
            version: 0, info: info, retain: CFContextRetain.retain, release: CFContextRetain.release,
            copyDescription: nil)
        for _ in 0..<2 {
            guard
                let created = CFSocketCreateWithNative(
                    kCFAllocatorDefault, self.socket, Self.readCallBack | Self.writeCallBack,
                    { _, type, _, _, info in
                        guard let info else { return }
                        Unmanaged<CFSocketWatch>.fromOpaque(info).takeUnretainedValue().fire(type)
                    },
                    &context)
            else { return nil }
            var check = CFSocketContext()
            CFSocketGetContext(created, &check)
            let flags = CFSocketGetSocketFlags(created) & ~Self.closeOnInvalidate
            if check.info == info {
                CFSocketSetSocketFlags(created, flags | Self.leaveErrors)
                return created
            }
            // Stale: CF still tracks an earlier CFSocket for this descriptor number (closed without
            // being invalidated). It must not close our descriptor; drop it and create again.
            CFSocketSetSocketFlags(created, flags)
            CFSocketInvalidate(created)
        }
        return nil
    }

    /// Makes the armed directions equal `interest`.
    func arm(_ interest: SocketInterest) {
        guard let cfSocket, interest != self.interest else { return }
        var enable: CFOptionFlags = 0
        var disable: CFOptionFlags = 0
        if interest.contains(.read) != self.interest.contains(.read) {
            if interest.contains(.read) { enable |= Self.readCallBack } else { disable |= Self.readCallBack }
        }
        if interest.contains(.write) != self.interest.contains(.write) {
            if interest.contains(.write) { enable |= Self.writeCallBack } else { disable |= Self.writeCallBack }
        }
        self.interest = interest
        if disable != 0 { CFSocketDisableCallBacks(cfSocket, disable) }
        if enable != 0 { CFSocketEnableCallBacks(cfSocket, enable) }
    }

    /// Stops every callout for good. CF invalidates the source too and forgets the descriptor
    /// number, which it leaves open (the caller closes it).
    func invalidate() {
        self.interest = []
        if let cfSocket {
            CFSocketSetSocketFlags(cfSocket, CFSocketGetSocketFlags(cfSocket) & ~Self.closeOnInvalidate)
            CFSocketInvalidate(cfSocket)
        }
        if let source { CFRunLoopSourceInvalidate(source) }
        self.cfSocket = nil
        self.source = nil
    }

    /// The callout: one direction fired.
    private func fire(_ type: CFSocketCallBackType) {
        if type.rawValue == Self.readCallBack {
            // Read re-enables itself after the callout unless it was disabled meanwhile.
            guard self.interest.contains(.read) else { return }
            self.slot.handler?.socketBecameReady(self.socket, events: .read)
        } else if type.rawValue == Self.writeCallBack {
            guard self.interest.contains(.write) else { return }
            self.slot.handler?.socketBecameReady(self.socket, events: .write)
            // CF disarmed the write callback when it fired; re-arm it while write is still wanted
            // (the handler may have changed the interest or closed the socket meanwhile).
            if self.interest.contains(.write), let cfSocket {
                CFSocketEnableCallBacks(cfSocket, Self.writeCallBack)
            }
        }
    }
}
