extension RunLoopScheduler {
    /// How a ``RunLoopScheduler`` watches sockets on its run loop.
    ///
    /// Both deliver readiness on the network thread, for exactly the directions curl asked for.
    /// They differ in who waits on the sockets.
    ///
    /// ## The default: `.epollSource`
    ///
    /// Confirmed by the benchmark runner (`Docs/results/2026-11-21-xeon-2vcpu`, small GETs against
    /// nginx, the engine driven directly): `.epollSource` 16.4k / 29.2k / 25.8k / 19.0k requests/s at
    /// 1 / 16 / 128 / 1,024 in flight with 47 / 34 / 39 / 52 µs CPU per request, against `.cfSocket`'s
    /// 9.9k / 25.2k / 18.6k / 9.4k at 88 / 43 / 57 / 112 µs, and `DispatchScheduler`'s 9.7k / 30.2k /
    /// 27.0k / 16.9k at 82 / 42 / 47 / 69 µs.
    ///
    /// The first measurement, before the runner existed: two schedulers on one
    /// network thread bounce a byte over N `AF_UNIX` socket pairs (each read event reads it and
    /// writes it back), release build, medians of 5 runs; the ranges span two runs on 2 vCPUs
    /// shared with other builds (load average 5–6), so trust the ratios, not the absolute numbers:
    ///
    /// | pairs | `.epollSource` | `.cfSocket` |
    /// |---|---|---|
    /// | 1   | 111–141k events/s, 4.3–4.5 µs CPU/event | 16–20k events/s, 17–19 µs CPU/event |
    /// | 16  | 119–475k events/s, 1.8–2.8 µs CPU/event | 45–50k events/s, 12–13 µs CPU/event |
    /// | 128 | 96–484k events/s, 1.7–2.0 µs CPU/event  | 18–43k events/s, 16–22 µs CPU/event |
    ///
    /// With the two schedulers on two threads the picture is the same: `.epollSource` 3–10× the
    /// events per second at a quarter to a tenth of the CPU per event. `.cfSocket` pays for CF's
    /// helper thread: a `select()` over every descriptor, two thread hops and several system calls
    /// per event.
    public enum SocketStrategy: Sendable, Hashable, CaseIterable {
        /// One `CFSocket` per descriptor, its run-loop source in every mode: the classic way.
        ///
        /// CoreFoundation's process-wide helper thread (`com.apple.CFSocket.private` in CF's
        /// source; on Linux it keeps the name of the thread that created the first CFSocket, because
        /// the kernel rejects the 26-byte name) `select()`s over every CFSocket's descriptor and
        /// signals the source, which the network thread then runs: each event crosses two threads.
        case cfSocket

        /// One `epoll` descriptor per scheduler, holding its sockets, as the port of a version-1
        /// run-loop source.
        ///
        /// The run loop's own epoll wakes on it directly, so there is no helper thread and no
        /// thread hop; the source drains ready events with a zero-timeout `epoll_wait`. The default.
        case epollSource
    }
}

/// How a ``RunLoopScheduler`` watches sockets; see ``RunLoopScheduler/SocketStrategy``.
public typealias SocketStrategy = RunLoopScheduler.SocketStrategy
