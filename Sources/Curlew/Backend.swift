import CurlewDispatch
import CurlewRunLoop
import CurlewTransport

/// Which scheduler a ``RequestOperationManager`` runs its engine on: the one choice in Curlew that
/// knows the backends. Everything above it is backend-blind.
///
/// ```swift
/// let api = RequestOperationManager(baseURL: url)                              // .dispatch
/// let perSocket = RequestOperationManager(baseURL: url, backend: .dispatch(sockets: .sourcePerSocket))
/// let classic = RequestOperationManager(baseURL: url, backend: .runLoop)       // epoll run-loop source
/// let cf = RequestOperationManager(baseURL: url, backend: .runLoop(sockets: .cfSocket))
/// ```
public struct Backend: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Sendable, Hashable {
        case dispatch(DispatchScheduler.SocketStrategy)
        case runLoop(RunLoopScheduler.SocketStrategy)
    }

    private let kind: Kind

    /// `DispatchScheduler`: one serial queue, and one dispatch source on an `epoll` set holding the
    /// sockets (GCD-first; the default).
    public static let dispatch = Backend(kind: .dispatch(.epollSource))

    /// `DispatchScheduler` watching sockets as `sockets` says.
    ///
    /// - Parameter sockets: `.epollSource` (the default of ``dispatch``) or `.sourcePerSocket`,
    ///   `URLSession`'s model, which wakes the queue's thread for nearly every socket event (see
    ///   `DispatchScheduler.SocketStrategy`).
    public static func dispatch(sockets: DispatchScheduler.SocketStrategy) -> Backend {
        Backend(kind: .dispatch(sockets))
    }

    /// `RunLoopScheduler` on the shared network thread, watching sockets with one `epoll` descriptor
    /// as a run-loop source.
    public static let runLoop = Backend(kind: .runLoop(.epollSource))

    /// `RunLoopScheduler` on the shared network thread, watching sockets as `sockets` says.
    ///
    /// - Parameter sockets: `.epollSource` (the default of ``runLoop``) or `.cfSocket`.
    public static func runLoop(sockets: RunLoopScheduler.SocketStrategy) -> Backend {
        Backend(kind: .runLoop(sockets))
    }

    /// A new scheduler of this kind, for one engine.
    ///
    /// - Parameter label: Names the dispatch backend's queue.
    public func makeScheduler(label: String = "curlew.manager") -> any TransferScheduler {
        switch self.kind {
        case .dispatch(let sockets):
            return DispatchScheduler(label: label, sockets: sockets)
        case .runLoop(let sockets):
            return RunLoopScheduler(sockets: sockets)
        }
    }

    /// The backend as it is written in Swift: `dispatch` (the default, an epoll source),
    /// `dispatch(sockets: .sourcePerSocket)`, `runLoop` (an epoll run-loop source) or
    /// `runLoop(sockets: .cfSocket)`.
    public var description: String {
        switch self.kind {
        case .dispatch(.epollSource): return "dispatch"
        case .dispatch(.sourcePerSocket): return "dispatch(sockets: .sourcePerSocket)"
        case .runLoop(.epollSource): return "runLoop"
        case .runLoop(.cfSocket): return "runLoop(sockets: .cfSocket)"
        }
    }
}
