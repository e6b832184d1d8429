import CurlewDispatch
import CurlewRunLoop
import CurlewTransport

/// The scheduler configurations a Curlew client can run on.
enum CurlewBackend: String, CaseIterable, Sendable {
    /// `DispatchScheduler`: a serial queue, dispatch sources for sockets and the timer.
    case dispatch
    /// `DispatchScheduler(sockets: .epollSource)`: one epoll set, watched by one dispatch source.
    case dispatchEpoll
    /// `RunLoopScheduler(sockets: .cfSocket)` on the shared network thread.
    case runLoopCFSocket
    /// `RunLoopScheduler(sockets: .epollSource)` on the shared network thread.
    case runLoopEpoll

    /// A new scheduler of this kind (each engine binds its own).
    func makeScheduler() -> any TransferScheduler {
        switch self {
        case .dispatch: DispatchScheduler(sockets: .sourcePerSocket)
        case .dispatchEpoll: DispatchScheduler(sockets: .epollSource)
        case .runLoopCFSocket: RunLoopScheduler(sockets: .cfSocket)
        case .runLoopEpoll: RunLoopScheduler(sockets: .epollSource)
        }
    }
}
