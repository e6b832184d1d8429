extension DispatchScheduler {
    /// How a ``DispatchScheduler`` watches sockets. Both deliver readiness as blocks on the
    /// scheduler's queue, for exactly the directions curl asked for; they differ in how many
    /// dispatch sources there are and in how often a thread must be woken.
    ///
    /// ## Measured
    ///
    /// libdispatch on Linux watches every source with one epoll set on its manager thread, which
    /// wakes a worker thread to run the handlers. With a source per socket that is about one
    /// sleep and wake-up of the queue's thread per request at 16 requests in flight (measured: 1.0
    /// voluntary context switches per request). With `.epollSource` the handler drains every ready
    /// socket at once: 0.07 context switches per request, and the dispatch engine runs at the
    /// run-loop backend's epoll speed (see `Docs/Benchmarks.md` for the figures and the command).
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
        /// default: it costs one descriptor per scheduler, and the engine runs about 1.5 times as
        /// fast at 16–128 requests in flight.
        case epollSource
    }
}
