import CoreFoundation
import CurlewTransport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A ``TransferScheduler`` on **the calling thread's** `CFRunLoop`, for the two designs the
/// articles reject.
///
/// Curlew's `RunLoopScheduler` always runs on a `NetworkThread` it starts itself (a dedicated
/// thread that lives forever), so it can target neither the main run loop nor a short-lived
/// thread of an operation. This scheduler does the same job on whatever loop creates it: work is
/// queued with `CFRunLoopPerformBlock` + `CFRunLoopWakeUp`, sockets are `CFSocket` sources (as
/// `RunLoopScheduler(sockets: .cfSocket)`, so `curlew-runloop-engine` is the like-for-like
/// comparison), and curl's timer is one `CFRunLoopTimer`. All in the common modes.
///
/// The loop must be run by its thread (`CFRunLoopRun` or `CFRunLoopRunInMode`) for anything to
/// happen: that is lesson 1, and here the point.
///
/// `@unchecked Sendable`: `loop` and `thread` are immutable; everything else is confined to the
/// loop's thread (`perform` only queues a block; the other requirements are called there by
/// contract, and `bind` moves over with a perform when called elsewhere).
final class LoopScheduler: TransferScheduler, @unchecked Sendable {
    let name: String
    private let loop: CFRunLoop
    private let thread: pthread_t
    private let target = EventTarget()
    private var watches: [Int32: LoopSocketWatch] = [:]
    private var timer: LoopTimer?
    private var isShutDown = false

    /// Creates a scheduler on the calling thread's run loop.
    init(name: String) {
        self.name = name
        self.loop = CFRunLoopGetCurrent()
        self.thread = pthread_self()
    }

    var isOnContext: Bool { pthread_equal(self.thread, pthread_self()) != 0 }

    func bind(_ handler: any TransferSchedulerEventHandler) {
        if self.isOnContext {
            self.target.handler = handler
        } else {
            let handover = Handover(handler)
            self.perform { [self] in if !self.isShutDown { self.target.handler = handover.handler } }
        }
    }

    func perform(_ work: @escaping @Sendable () -> Void) {
        CFRunLoopPerformBlock(self.loop, kCFRunLoopCommonModes, work)
        CFRunLoopWakeUp(self.loop)
    }

    func setInterest(_ interest: SocketInterest, for socket: Int32) {
        guard !self.isShutDown, socket >= 0 else { return }
        if let watch = self.watches[socket] {
            watch.arm(interest)
        } else if let watch = LoopSocketWatch(socket: socket, loop: self.loop, target: self.target) {
            self.watches[socket] = watch
            watch.arm(interest)
        } else if !interest.isEmpty {
            // CF could not watch it: fail the transfer (later, never from inside this call).
            self.perform { [self] in self.target.handler?.socketBecameReady(socket, events: .error) }
        }
    }

    func close(socket: Int32) {
        self.watches.removeValue(forKey: socket)?.invalidate()
        if socket >= 0 { Glibc.close(socket) }
    }

    func setTimer(_ request: TimerRequest) {
        guard !self.isShutDown else { return }
        switch request {
        case .disarm:
            self.timer?.arm(milliseconds: nil)
        case .after(let milliseconds):
            if self.timer == nil { self.timer = LoopTimer(loop: self.loop, target: self.target) }
            self.timer?.arm(milliseconds: milliseconds)
        }
    }

    var diagnostics: SchedulerDiagnostics {
        SchedulerDiagnostics(
            watchedSockets: self.watches.count,
            armedSockets: self.watches.values.filter { !$0.interest.isEmpty }.count,
            pendingCloses: 0,
            timerArmed: self.timer?.isArmed ?? false)
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        if !self.isShutDown {
            self.isShutDown = true
            for (socket, watch) in self.watches {
                watch.invalidate()
                Glibc.close(socket)
            }
            self.watches = [:]
            self.timer?.invalidate()
            self.timer = nil
            self.target.handler = nil
        }
        completion()
    }
}

/// The handler on its way to the loop's thread. `@unchecked Sendable`: written once before the
/// perform, read once on the loop's thread.
private final class Handover: @unchecked Sendable {
    let handler: any TransferSchedulerEventHandler
    init(_ handler: any TransferSchedulerEventHandler) { self.handler = handler }
}
