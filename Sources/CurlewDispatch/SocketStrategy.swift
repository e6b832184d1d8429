extension DispatchScheduler {
    /// How a ``DispatchScheduler`` watches sockets. Both deliver readiness as blocks on the
    /// scheduler's queue, for exactly the directions curl asked for; they differ in how many
    /// dispatch sources there are and in how often a thread must be woken.
    ///
    /// libdispatch on Linux watches sources from its manager thread, which wakes a worker thread to
    /// run their handlers: with a source per socket the queue's thread sleeps and wakes about once
    /// per request, while with `.epollSource` one wake-up drains every socket that is ready. The
    /// figures and the command are in the project's `Docs/Decisions/0003-dispatch-epoll-source-default.md`.
    public enum SocketStrategy: Sendable, Hashable, CaseIterable {
        /// A read source per socket, and a write source once curl asks for writing, kept and
        /// suspended or resumed as curl's interest changes: `URLSession`'s model on Linux. It costs
        /// a wake-up of the queue's thread for nearly every socket event.
        case sourcePerSocket

        /// One `epoll` descriptor per scheduler holding its sockets, watched by one dispatch read
        /// source whose handler collects every ready socket with a zero-timeout `epoll_wait`.
        ///
        /// The sockets are never registered with libdispatch, so arming or disarming a direction is
        /// one `epoll_ctl` and a socket is closed at once (no cancel handler to wait for). The
        /// default: it costs one descriptor per scheduler, and saves a thread wake-up for nearly
        /// every socket event.
        case epollSource
    }
}
