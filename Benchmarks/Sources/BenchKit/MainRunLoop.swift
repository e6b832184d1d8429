import CoreFoundation
import Foundation

/// The main thread's `CFRunLoop`, which every Swift client's main thread runs while the load runs.
///
/// For most clients the main thread is otherwise free (their load runs on their own context), so
/// the loop only serves the harness's timers and the lateness tick; for `main-runloop` the load
/// itself is on this loop.
public enum MainRunLoop {
    /// Runs `block` on the main thread, in the common modes, after what was queued before, and
    /// wakes the loop (`CFRunLoopPerformBlock` alone does not wake a sleeping loop on Linux).
    public static func perform(_ block: @escaping @Sendable () -> Void) {
        let loop = CFRunLoopGetMain()
        CFRunLoopPerformBlock(loop, kCFRunLoopCommonModes, block)
        CFRunLoopWakeUp(loop)
    }

    /// Runs `block` on the main thread once, after `seconds`. Call on the main thread.
    public static func after(seconds: Double, _ block: @escaping @Sendable () -> Void) {
        let timer = CFRunLoopTimerCreateWithHandler(
            kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + max(0, seconds), 0, 0, 0) { _ in block() }
        CFRunLoopAddTimer(CFRunLoopGetMain(), timer, kCFRunLoopCommonModes)
    }

    /// Runs the main loop in the default mode until `isDone` is true, checked whenever the loop
    /// returns; ``stop()`` makes it return. Call on the main thread.
    ///
    /// A never-signalled version-0 source keeps the mode non-empty, so the loop sleeps rather than
    /// returning at once when nothing else is scheduled on it.
    public static func run(until isDone: () -> Bool) {
        let loop = CFRunLoopGetMain()
        var context = CFRunLoopSourceContext()
        context.perform = { _ in }
        let keepAlive = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
        if let keepAlive { CFRunLoopAddSource(loop, keepAlive, kCFRunLoopCommonModes) }
        while !isDone() {
            _ = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1.0e10, false)
        }
        if let keepAlive { CFRunLoopSourceInvalidate(keepAlive) }
    }

    /// Makes ``run(until:)`` check its condition: a stop queued as a block, so it is not lost when
    /// the loop is between two runs.
    public static func stop() {
        self.perform { CFRunLoopStop(CFRunLoopGetMain()) }
    }
}
