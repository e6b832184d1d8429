import CurlewDispatch
import CurlewRunLoop
import CurlewTransport

/// The three scheduler backends a Curlew client can run on.
enum CurlewBackend: String, CaseIterable, Sendable {
    /// `DispatchScheduler`: a serial queue, dispatch sources for sockets and the timer.
    case dispatch
    /// `RunLoopScheduler(sockets: .cfSocket)` on the shared network thread.
    case runLoopCFSocket
    /// `RunLoopScheduler(sockets: .epollSource)` on the shared network thread.
    case runLoopEpoll

    /// A new scheduler of this kind (each engine binds its own).
    func makeScheduler() -> any TransferScheduler {
        switch self {
        case .dispatch: DispatchScheduler()
        case .runLoopCFSocket: RunLoopScheduler(sockets: .cfSocket)
        case .runLoopEpoll: RunLoopScheduler(sockets: .epollSource)
        }
    }
}
