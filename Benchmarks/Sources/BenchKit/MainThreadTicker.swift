import CoreFoundation
import Foundation

/// The `lateness` probe: a 1 ms tick on the **main** run loop that records how late each tick
/// fires, while the closed loop is measuring.
///
/// Each tick is armed for 1 ms after the previous one ran (a repeating `CFRunLoopTimer` whose next
/// fire date is moved in every callout, so a late tick never causes a burst of catch-up ticks);
/// its lateness is the time it ran minus the time it was armed for, in microseconds. With the main
/// thread free that is the loop's own timer latency; when the main loop also serves the load
/// (`main-runloop`) every transfer callback queued before the tick delays it.
///
/// `@unchecked Sendable`: confined to the main thread (created, installed, fired, read and
/// invalidated there); only `loop`, itself thread-safe, is shared.
public final class MainThreadTicker: @unchecked Sendable {
    /// The tick period.
    public static let periodSeconds = 0.001
    private static let periodNanoseconds: UInt64 = 1_000_000

    private let loop: ClosedLoop
    private var histogram = LatencyHistogram()
    private var timer: CFRunLoopTimer?
    private var expectedNanoseconds: UInt64 = 0

    /// Creates a ticker that records while `loop` is measuring.
    public init(loop: ClosedLoop) {
        self.loop = loop
    }

    /// Adds the tick to the main run loop in the common modes. Call on the main thread.
    public func install() {
        var context = CFRunLoopTimerContext()
        context.info = Unmanaged.passUnretained(self).toOpaque()
        context.retain = { info in
            if let info { _ = Unmanaged<MainThreadTicker>.fromOpaque(info).retain() }
            return info
        }
        context.release = { info in
            if let info { Unmanaged<MainThreadTicker>.fromOpaque(info).release() }
        }
        // Repeating with a huge interval: a non-repeating CF timer is invalidated after its first
        // fire even if its callout moves the fire date.
        guard let timer = CFRunLoopTimerCreate(
            kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + Self.periodSeconds, 1.0e9, 0, 0,
            { _, info in
                guard let info else { return }
                Unmanaged<MainThreadTicker>.fromOpaque(info).takeUnretainedValue().tick()
            },
            &context)
        else { return }
        self.expectedNanoseconds = MonotonicClock.nanoseconds() + Self.periodNanoseconds
        self.timer = timer
        CFRunLoopAddTimer(CFRunLoopGetMain(), timer, kCFRunLoopCommonModes)
    }

    /// Removes the tick from the loop. Call on the main thread.
    public func invalidate() {
        if let timer { CFRunLoopTimerInvalidate(timer) }
        self.timer = nil
    }

    /// Lateness percentiles of the ticks recorded so far, microseconds. Call on the main thread.
    public var lateness: Percentiles { self.histogram.percentiles }

    /// Ticks recorded so far. Call on the main thread.
    public var ticks: UInt64 { self.histogram.count }

    private func tick() {
        let now = MonotonicClock.nanoseconds()
        if self.loop.isMeasuring {
            self.histogram.record(nanoseconds: now > self.expectedNanoseconds ? now - self.expectedNanoseconds : 0)
        }
        guard let timer else { return }
        self.expectedNanoseconds = MonotonicClock.nanoseconds() + Self.periodNanoseconds
        CFRunLoopTimerSetNextFireDate(timer, CFAbsoluteTimeGetCurrent() + Self.periodSeconds)
    }
}
