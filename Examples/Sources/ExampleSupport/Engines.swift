import Curlew
import CurlewTestServer
import Dispatch
import Foundation

/// The server every example talks to: `CurlewTestServer`, in the example's own process, bound to
/// 127.0.0.1 on a free port. An example that cannot start it stops at once.
public let server: TestServer = {
    do {
        return try TestServer.start()
    } catch {
        Report.abort("the test server did not start: \(error)")
    }
}()

/// The three backend configurations, as the examples name and make them.
public enum ExampleBackend: String, CaseIterable, Sendable {
    /// `DispatchScheduler`: a serial queue is the context.
    case dispatch
    /// `RunLoopScheduler` on a network thread, sockets watched by one epoll source.
    case runLoopEpoll = "runloop-epoll"
    /// `RunLoopScheduler` on a network thread, sockets watched by CFSocket sources.
    case runLoopCFSocket = "runloop-cfsocket"

    /// A scheduler of this kind. Each run-loop one gets a network thread of its own, named
    /// `thread`, so an example can tell its callbacks apart from anyone else's.
    public func makeScheduler(thread name: String) -> any TransferScheduler {
        switch self {
        case .dispatch:
            return DispatchScheduler(label: "example.\(self.rawValue)")
        case .runLoopEpoll:
            return RunLoopScheduler(thread: NetworkThread(name: name), sockets: .epollSource)
        case .runLoopCFSocket:
            return RunLoopScheduler(thread: NetworkThread(name: name), sockets: .cfSocket)
        }
    }
}

extension TransferEngine {
    /// Shuts the engine down and waits (at most 30 s) until it has.
    public func shutDownAndWait() {
        let done = DispatchSemaphore(value: 0)
        self.shutdown { done.signal() }
        if !Waiting.wait(for: done) { Report.abort("an engine did not shut down within 30 s") }
    }
}

/// A transfer delegate that notes the thread of every call and signals when the transfer ends.
public final class NotingDelegate: TransferDelegate, Sendable {
    /// The threads (kernel ids) that ran each call, in order.
    public let threads = Shared<[Int32]>([])
    /// The outcome, once the transfer completed.
    public let result = Shared<Result<TransferResponse, TransferError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Creates a delegate.
    public init() {}

    public func transfer(_ transfer: Transfer, didReceive response: HTTPResponse) { self.note() }
    public func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) { self.note() }
    public func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.note()
        self.result.set(result)
        self.done.signal()
    }

    /// Whether the transfer has completed.
    public var isDone: Bool { self.result.value != nil }

    /// Blocks until the transfer completed or `timeout` passed.
    ///
    /// - Returns: The outcome, or `nil` after the timeout.
    @discardableResult
    public func wait(timeout: Duration = .seconds(30)) -> Result<TransferResponse, TransferError>? {
        _ = Waiting.wait(for: self.done, timeout: timeout)
        return self.result.value
    }

    private func note() {
        let id = ThreadNames.currentID()
        self.threads.withLock { $0.append(id) }
    }
}
