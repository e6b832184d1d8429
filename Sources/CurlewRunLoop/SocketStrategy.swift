extension RunLoopScheduler {
    /// How a ``RunLoopScheduler`` watches sockets on its run loop.
    ///
    /// Both deliver readiness on the network thread, for exactly the directions curl asked for.
    /// They differ in who waits on the sockets.
    ///
    /// ## The default: `.epollSource`
    ///
    /// With `.epollSource` the run loop's own wait covers curl's sockets; `.cfSocket` pays for CF's
    /// helper thread — a `select()` over every descriptor, and every event handed from that thread to
    /// the run loop's. The figures and the command are in the project's
    /// `Docs/Decisions/0001-run-loop-epoll-source-cfsocket-for-teaching.md`.
    public enum SocketStrategy: Sendable, Hashable, CaseIterable {
        /// One `CFSocket` per descriptor, its run-loop source in every mode: the classic way.
        ///
        /// CoreFoundation's process-wide helper thread (`com.apple.CFSocket.private` in CF's
        /// source; on Linux it keeps the name of the thread that created the first CFSocket, because
        /// the kernel rejects the 26-byte name) `select()`s over every CFSocket's descriptor and
        /// signals the source, which the network thread then runs: each event crosses two threads.
        ///
        /// That thread is woken through a pair of UDP sockets that CF binds to 127.0.0.1 and
        /// connects to each other when the first CFSocket is made, and keeps for the life of the
        /// process (closing them would break every later CFSocket). They listen on nothing and
        /// take nothing from another address (a connected UDP socket drops datagrams from any peer
        /// but its own), but they are two descriptors and two UDP sockets a process that never
        /// chose `.cfSocket` does not have: the scheduler suite checks, in a child process, that
        /// `.epollSource` opens no UDP socket and `.cfSocket` exactly this loopback pair.
        case cfSocket

        /// One `epoll` descriptor per scheduler, holding its sockets, as the port of a version-1
        /// run-loop source.
        ///
        /// The run loop's own epoll wakes on it directly, so there is no helper thread and no
        /// thread hop; the source drains ready events with a zero-timeout `epoll_wait`. The default.
        case epollSource
    }
}
