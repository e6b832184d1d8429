import CoreFoundation

/// curl's one timer on a ``LoopScheduler``'s loop: a `CFRunLoopTimer` made once and re-armed by
/// moving its fire date. It repeats with a huge interval, because CF invalidates a non-repeating
/// timer after its first fire even when the callout moved its date.
///
/// Confined to the loop's thread.
final class LoopTimer {
    private static let farFuture: CFAbsoluteTime = 3.0e9

    private let target: EventTarget
    private var timer: CFRunLoopTimer?
    private(set) var isArmed = false

    init?(loop: CFRunLoop, target: EventTarget) {
        self.target = target
        var context = CFRunLoopTimerContext()
        context.info = Unmanaged.passUnretained(self).toOpaque()
        context.retain = CFInfoRetain.retain
        context.release = CFInfoRetain.release
        guard let timer = CFRunLoopTimerCreate(
            kCFAllocatorDefault, Self.farFuture, 1.0e10, 0, 0,
            { _, info in
                guard let info else { return }
                Unmanaged<LoopTimer>.fromOpaque(info).takeUnretainedValue().fired()
            },
            &context)
        else { return nil }
        self.timer = timer
        CFRunLoopAddTimer(loop, timer, kCFRunLoopCommonModes)
    }

    /// Fires once after `milliseconds` (0: on the loop's next pass), or never (`nil`).
    func arm(milliseconds: Int?) {
        guard let timer else { return }
        if let milliseconds {
            self.isArmed = true
            CFRunLoopTimerSetNextFireDate(timer, CFAbsoluteTimeGetCurrent() + Double(max(0, milliseconds)) / 1000)
        } else {
            self.isArmed = false
            CFRunLoopTimerSetNextFireDate(timer, Self.farFuture)
        }
    }

    func invalidate() {
        self.isArmed = false
        if let timer { CFRunLoopTimerInvalidate(timer) }
        self.timer = nil
    }

    private func fired() {
        guard self.isArmed else { return }
        self.isArmed = false
        self.target.handler?.timerFired()
    }
}
