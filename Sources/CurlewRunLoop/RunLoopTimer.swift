import CurlewTransport
internal import CoreFoundation

/// The scheduler's one timer: a `CFRunLoopTimer` created once and re-armed by moving its fire date.
///
/// - It is created *repeating*, with a huge interval (1e10 s, which CF clamps to about 16 years):
///   a non-repeating CF timer is invalidated after its first fire even when its callout re-arms it,
///   and a transfer then hangs until a socket event happens to run curl's timeouts.
/// - Re-arming is `CFRunLoopTimerSetNextFireDate`; disarming moves the date far into the future.
///   After a fire that the handler did not re-arm, CF moves the date on by the interval: disarmed
///   for practical purposes.
/// - `.after(milliseconds: 0)` sets the fire date to now: the timer fires on the loop's next pass,
///   never inside ``set(_:)``.
///
/// Confined to the network thread.
final class RunLoopTimer {
    /// Far enough to never fire, below CF's clamp (about year 2129 in CF's reference date).
    private static let farFuture: CFAbsoluteTime = 3.0e9

    private let slot: HandlerSlot
    private var timer: CFRunLoopTimer?
    /// Whether a fire is pending.
    private(set) var isArmed = false

    /// Creates the timer, disarmed, and adds it to `loop` in every mode of `modeNames`.
    init?(loop: CFRunLoop, modeNames: [CFString], slot: HandlerSlot) {
        self.slot = slot
        var context = CFRunLoopTimerContext()
        context.info = Unmanaged.passUnretained(self).toOpaque()
        context.retain = CFContextRetain.retain
        context.release = CFContextRetain.release
        let created = CFRunLoopTimerCreate(
            kCFAllocatorDefault, Self.farFuture, 1.0e10, 0, 0,
            { _, info in
                guard let info else { return }
                Unmanaged<RunLoopTimer>.fromOpaque(info).takeUnretainedValue().fire()
            },
            &context)
        guard let created else { return nil }
        self.timer = created
        for mode in modeNames { CFRunLoopAddTimer(loop, created, mode) }
    }

    /// Arms, re-arms or disarms the timer.
    func set(_ request: TimerRequest) {
        guard let timer else { return }
        switch request {
        case .disarm:
            self.isArmed = false
            CFRunLoopTimerSetNextFireDate(timer, Self.farFuture)
        case .after(let milliseconds):
            self.isArmed = true
            let delay = Double(max(milliseconds, 0)) / 1000
            CFRunLoopTimerSetNextFireDate(timer, CFAbsoluteTimeGetCurrent() + delay)
        }
    }

    /// Removes the timer from every run loop for good.
    func invalidate() {
        self.isArmed = false
        if let timer { CFRunLoopTimerInvalidate(timer) }
        self.timer = nil  // drops CF's timer, which releases its reference to `self`
    }

    private func fire() {
        // Only an armed timer reports: a fire date CF moved on by the interval is not a request.
        guard self.isArmed else { return }
        self.isArmed = false
        self.slot.handler?.timerFired()
    }
}
