import CoreFoundation
import CurlewTransport

/// One descriptor watched the classic way: a `CFSocket` whose run-loop source is on the scheduler's
/// loop, with exactly the directions curl asked for enabled.
///
/// CoreFoundation's socket-manager thread `select()`s every CFSocket of the process and signals the
/// source, which then runs on the loop's thread. What has to be right:
/// - `kCFSocketCloseOnInvalidate` is cleared: curl's descriptor is closed by the scheduler, after
///   invalidating, never by CF.
/// - `kCFSocketLeaveErrors` is set, so CF does not consume `SO_ERROR` and skip the write callout of
///   a failed connect.
/// - Adding the source enables every callback, so both are disabled right after and the wanted
///   ones enabled.
/// - CF does not re-enable the write callback after it fired: done here while write is wanted.
/// - `CFSocketCreateWithNative` returns CF's existing object for a descriptor number it still
///   tracks: such a stale object (another context) is invalidated and creation retried.
///
/// Confined to the loop's thread.
final class LoopSocketWatch {
    private static let read = CFSocketCallBackType.readCallBack.rawValue
    private static let write = CFSocketCallBackType.writeCallBack.rawValue
    private static let leaveErrors: CFOptionFlags = 64  // kCFSocketLeaveErrors
    private static let closeOnInvalidate: CFOptionFlags = 128  // kCFSocketCloseOnInvalidate

    let socket: Int32
    private(set) var interest: SocketInterest = []
    private let target: EventTarget
    private var cfSocket: CFSocket?
    private var source: CFRunLoopSource?

    /// Creates the CFSocket and adds its source to `loop` in the common modes, nothing armed; `nil`
    /// if CF refused.
    init?(socket: Int32, loop: CFRunLoop, target: EventTarget) {
        self.socket = socket
        self.target = target
        guard let cfSocket = self.makeCFSocket(),
              let source = CFSocketCreateRunLoopSource(kCFAllocatorDefault, cfSocket, 0)
        else {
            self.invalidate()
            return nil
        }
        self.cfSocket = cfSocket
        self.source = source
        CFRunLoopAddSource(loop, source, kCFRunLoopCommonModes)
        CFSocketDisableCallBacks(cfSocket, Self.read | Self.write)
    }

    private func makeCFSocket() -> CFSocket? {
        let info = Unmanaged.passUnretained(self).toOpaque()
        var context = CFSocketContext(
            version: 0, info: info, retain: CFInfoRetain.retain, release: CFInfoRetain.release, copyDescription: nil)
        for _ in 0..<2 {
            guard let created = CFSocketCreateWithNative(
                kCFAllocatorDefault, self.socket, Self.read | Self.write,
                { _, type, _, _, info in
                    guard let info else { return }
                    Unmanaged<LoopSocketWatch>.fromOpaque(info).takeUnretainedValue().fired(type)
                },
                &context)
            else { return nil }
            var existing = CFSocketContext()
            CFSocketGetContext(created, &existing)
            let flags = CFSocketGetSocketFlags(created) & ~Self.closeOnInvalidate
            CFSocketSetSocketFlags(created, existing.info == info ? flags | Self.leaveErrors : flags)
            if existing.info == info { return created }
            CFSocketInvalidate(created)  // stale: CF still tracked an old object for this number
        }
        return nil
    }

    /// Enables exactly the directions in `interest`.
    func arm(_ interest: SocketInterest) {
        guard let cfSocket, interest != self.interest else { return }
        let wanted = (interest.contains(.read) ? Self.read : 0) | (interest.contains(.write) ? Self.write : 0)
        let armed = (self.interest.contains(.read) ? Self.read : 0) | (self.interest.contains(.write) ? Self.write : 0)
        self.interest = interest
        if armed & ~wanted != 0 { CFSocketDisableCallBacks(cfSocket, armed & ~wanted) }
        if wanted & ~armed != 0 { CFSocketEnableCallBacks(cfSocket, wanted & ~armed) }
    }

    /// Stops every callout for good; the descriptor stays open (the caller closes it).
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

    private func fired(_ type: CFSocketCallBackType) {
        if type.rawValue == Self.read {
            guard self.interest.contains(.read) else { return }
            self.target.handler?.socketBecameReady(self.socket, events: .read)
        } else if type.rawValue == Self.write {
            guard self.interest.contains(.write) else { return }
            self.target.handler?.socketBecameReady(self.socket, events: .write)
            if self.interest.contains(.write), let cfSocket {
                CFSocketEnableCallBacks(cfSocket, Self.write)
            }
        }
    }
}
