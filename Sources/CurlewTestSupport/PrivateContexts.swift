import CurlewDispatch
import CurlewRunLoop
import CurlewTransport

/// Network contexts that serve one test target only: a network thread per run-loop socket strategy
/// (instead of `NetworkThread.shared`) and a label for dispatch queues.
///
/// Tests that hold a context on purpose, or load it heavily (a thousand transfers), then stall no
/// other target's tests; and a target whose synchronous tests block cooperative threads while
/// waiting for the shared thread cannot deadlock with one that holds it. Network threads live as
/// long as the process: make one value per target, in a `static let`.
///
/// ```swift
/// enum Contexts { static let mine = PrivateContexts(name: "Batch") }
/// let scheduler = backend.makeScheduler(in: Contexts.mine)
/// ```
public final class PrivateContexts: Sendable {
    /// The dispatch queues' label.
    public let label: String
    /// The thread of the CFSocket configuration.
    public let cfSocketThread: NetworkThread
    /// The thread of the epoll configuration.
    public let epollThread: NetworkThread

    /// Creates the threads, named `<name>.cf` and `<name>.epoll`.
    public init(name: String) {
        self.label = name
        self.cfSocketThread = NetworkThread(name: "\(name).cf")
        self.epollThread = NetworkThread(name: "\(name).epoll")
    }
}

extension BackendConfiguration {
    /// A new scheduler of this configuration on `contexts`: its own queue for dispatch, the
    /// contexts' thread for the run-loop configurations.
    public func makeScheduler(in contexts: PrivateContexts) -> any TransferScheduler {
        switch self {
        case .dispatch:
            return DispatchScheduler(label: contexts.label, sockets: .sourcePerSocket)
        case .dispatchEpoll:
            return DispatchScheduler(label: contexts.label, sockets: .epollSource)
        case .runLoopCFSocket:
            return RunLoopScheduler(thread: contexts.cfSocketThread, sockets: .cfSocket)
        case .runLoopEpoll:
            return RunLoopScheduler(thread: contexts.epollThread, sockets: .epollSource)
        }
    }
}
