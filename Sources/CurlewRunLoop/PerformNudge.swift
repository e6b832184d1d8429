internal import CoreFoundation

/// How a ``RunLoopScheduler`` makes sure that work it queues *from its own network thread* runs
/// before the loop sleeps, without a system call.
///
/// Work queued from another thread needs `CFRunLoopWakeUp`: an `eventfd` write, which the loop's next
/// wait then reads. From the loop's own thread the loop is awake, and CF's loop (`__CFRunLoopRun`)
/// runs queued blocks before it waits — after the version-0 sources, and after whatever woke it —
/// except for a block queued by another block at the top of a pass when no version-0 source is
/// signalled: that pass would then wait with the block still queued. Signalling a version-0 source
/// closes that gap. CF handles it in the same pass, runs the queued blocks after it, and polls instead
/// of sleeping. Signalling only sets a flag under the source's lock. (`CFRunLoopWakeUp` from the
/// loop's own thread is not free: at the top of a pass CF does not ignore it, and every call writes.
/// Measured on the epoll run loop, 16 small GETs in flight: 0.55 `write`s per request, each one a
/// transfer started from the completion of another.)
///
/// Only for a ``NetworkThread``: it runs its loop with `returnAfterSourceHandled` false, so the
/// handled source changes nothing else. A loop that its thread runs itself (`RunLoop.run(mode:before:)`)
/// would return after the signalled source as after an input source, so a scheduler on such a
/// context keeps waking its loop.
///
/// Confined to the network thread.
final class PerformNudge {
    /// The network thread's run loop, cached so that the scheduler's hot path does not look it up.
    let loop: CFRunLoop
    private var source: CFRunLoopSource?

    /// Creates the source and adds it to `loop` in every mode of `modeNames`; `nil` when CF cannot
    /// create it (out of memory), and then the scheduler wakes its loop as from any thread.
    init?(loop: CFRunLoop, modeNames: [CFString]) {
        var context = CFRunLoopSourceContext()
        context.version = 0
        context.perform = { _ in }  // the queued blocks run after it; nothing else to do
        guard let source = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context) else { return nil }
        self.loop = loop
        self.source = source
        for mode in modeNames { CFRunLoopAddSource(loop, source, mode) }
    }

    /// Marks the source signalled: the loop handles it before it next waits.
    func signal() {
        if let source { CFRunLoopSourceSignal(source) }
    }

    /// Removes the source from every mode for good.
    func invalidate() {
        if let source { CFRunLoopSourceInvalidate(source) }
        self.source = nil
    }
}
