#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Every child the runner has started and not yet reaped, so that an interrupted runner (Ctrl-C,
/// SIGTERM, SIGHUP) can stop exactly those, servers included, before it exits.
///
/// `@unchecked Sendable`: `children` is only touched with `lock` (an `NSLock`) held; the signal handler
/// runs on a dispatch queue while the main thread spawns and reaps.
final class SpawnedProcesses: @unchecked Sendable {
    /// The one registry of the process.
    static let shared = SpawnedProcesses()

    private let lock = NSLock()
    /// PID → whether the child leads a process group of its own.
    private var children: [pid_t: Bool] = [:]

    /// Records a child that was just started.
    func register(pid: pid_t, processGroup: Bool) {
        self.lock.withLock { self.children[pid] = processGroup }
    }

    /// Forgets a child that has been reaped (its PID may be reused from now on).
    func unregister(pid: pid_t) {
        self.lock.withLock { self.children[pid] = nil }
    }

    /// Sends SIGTERM to every child still registered, waits up to `graceSeconds` for them to exit, then
    /// sends SIGKILL to the rest (to the whole group for group leaders). Only for the way out: the
    /// children are not reaped, so their PIDs stay theirs until the runner exits.
    func stopAll(graceSeconds: Double) {
        let children = self.lock.withLock { self.children }
        guard !children.isEmpty else { return }
        for (pid, isGroup) in children { _ = kill(isGroup ? -pid : pid, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(double: graceSeconds)
        var remaining = children
        while !remaining.isEmpty && ContinuousClock.now < deadline {
            usleep(20_000)
            remaining = remaining.filter { pid, _ in
                // A zombie counts as exited: WNOHANG|WNOWAIT peeks without reaping.
                var info = siginfo_t()
                let peeked = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
                return peeked == 0 && info.si_signo == 0  // nothing waitable: still running
            }
        }
        for (pid, isGroup) in remaining { _ = kill(isGroup ? -pid : pid, SIGKILL) }
        for (pid, isGroup) in children where isGroup { _ = kill(-pid, SIGKILL) }  // workers left behind
    }
}
