import Foundation
internal import CoreFoundation
internal import Glibc

/// The run loop a ``RunLoopScheduler`` runs on: a ``NetworkThread``'s (the classic design: a
/// dedicated thread that runs its loop for ever), or the run loop of a thread that runs it itself —
/// the main thread's, or an operation's own thread (the two designs the AFNetworking articles
/// reject, which the benchmark runner measures with exactly this scheduler).
///
/// ```swift
/// let classic = RunLoopScheduler(context: .networkThread(.shared))   // the default
/// let onMain = RunLoopScheduler(context: .main)                      // main must run its loop
/// ```
///
/// A context other than a network thread does nothing unless its thread runs its run loop (in one of
/// the scheduler's modes): that is lesson 1 of the articles.
public struct RunLoopContext: Sendable {
    enum Kind: Sendable {
        case networkThread(NetworkThread)
        case runLoop(RunningLoop)
    }

    let kind: Kind

    /// A dedicated network thread, started on first use (``NetworkThread/shared`` by default).
    public static func networkThread(_ thread: NetworkThread = .shared) -> RunLoopContext {
        RunLoopContext(kind: .networkThread(thread))
    }

    /// The run loop of the thread that calls this; that thread must run it (`CFRunLoopRun`,
    /// `RunLoop.run`) for the scheduler's work to happen.
    public static func currentThread() -> RunLoopContext {
        RunLoopContext(kind: .runLoop(RunningLoop(loop: CFRunLoopGetCurrent(), pthread: pthread_self())))
    }

    /// The main thread's run loop; the main thread must run it (`RunLoop.main.run()`,
    /// `dispatchMain()` does not).
    public static var main: RunLoopContext {
        RunLoopContext(kind: .runLoop(RunningLoop(loop: CFRunLoopGetMain(), pthread: nil)))
    }

    /// The network thread, when the context is one.
    public var networkThread: NetworkThread? {
        if case .networkThread(let thread) = self.kind { return thread }
        return nil
    }

    /// Whether the caller runs on the context's thread.
    var isCurrent: Bool {
        switch self.kind {
        case .networkThread(let thread): return thread.isCurrent
        case .runLoop(let running): return running.isCurrent
        }
    }

    /// The run loop (starting the network thread first if needed).
    var runLoop: CFRunLoop {
        switch self.kind {
        case .networkThread(let thread): return thread.running().runLoop
        case .runLoop(let running): return running.loop
        }
    }

    /// Queues `block` in the modes of `modeArgument` and wakes the loop (queuing alone does not wake a
    /// sleeping loop on Linux).
    func perform(_ modeArgument: CFTypeRef, _ block: @escaping @Sendable () -> Void) {
        switch self.kind {
        case .networkThread(let thread):
            thread.perform(modeArgument, block)
        case .runLoop(let running):
            CFRunLoopPerformBlock(running.loop, modeArgument, block)
            CFRunLoopWakeUp(running.loop)
        }
    }
}

/// A run loop some thread runs itself, and that thread's identity (`nil`: the main thread).
///
/// Safety: `@unchecked Sendable` because both properties are immutable, and the CoreFoundation calls
/// made with `loop` from other threads (`CFRunLoopPerformBlock`, `CFRunLoopWakeUp`) are thread-safe.
final class RunningLoop: @unchecked Sendable {
    let loop: CFRunLoop
    private let pthread: pthread_t?

    init(loop: CFRunLoop, pthread: pthread_t?) {
        self.loop = loop
        self.pthread = pthread
    }

    var isCurrent: Bool {
        guard let pthread = self.pthread else { return Thread.isMainThread }
        return pthread_equal(pthread, pthread_self()) != 0
    }
}
