import CurlewDispatch
import CurlewRunLoop
import CurlewTransport
import Foundation
import Testing

/// Every scheduler configuration a backend-agnostic test runs on.
///
/// ```swift
/// @Test(arguments: BackendConfiguration.allCases)
/// func getsAResponse(_ backend: BackendConfiguration) async throws {
///     let scheduler = backend.makeScheduler()
///     // …
/// }
/// ```
///
/// Test names show the raw value, e.g. `getsAResponse(_:) → runloop-epoll`.
public enum BackendConfiguration: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// ``DispatchScheduler`` with a read and a write `DispatchSource` per socket (`.sourcePerSocket`,
    /// `URLSession`'s model): the dispatch backend's other socket strategy, not its default.
    case dispatch = "dispatch"
    /// ``DispatchScheduler`` watching sockets with one `epoll` descriptor and one dispatch source
    /// (`.epollSource`): the library's default backend (`DispatchScheduler()`, `Backend.dispatch`).
    case dispatchEpoll = "dispatch-epoll"
    /// `RunLoopScheduler` watching sockets with CoreFoundation `CFSocket` run-loop sources.
    case runLoopCFSocket = "runloop-cfsocket"
    /// `RunLoopScheduler` watching sockets with one `epoll` descriptor as a run-loop source.
    case runLoopEpoll = "runloop-epoll"

    /// A new, unbound scheduler of this configuration. The run-loop ones share the process's
    /// network thread; each call still returns a scheduler of its own.
    public func makeScheduler() -> any TransferScheduler {
        switch self {
        case .dispatch:
            return DispatchScheduler(sockets: .sourcePerSocket)
        case .dispatchEpoll:
            return DispatchScheduler(sockets: .epollSource)
        case .runLoopCFSocket:
            return RunLoopScheduler(sockets: .cfSocket)
        case .runLoopEpoll:
            return RunLoopScheduler(sockets: .epollSource)
        }
    }

    /// The raw value, so parameterized test names say which backend ran.
    public var testDescription: String { self.rawValue }

    /// Every configuration, or only those named in the environment variable `CURLEW_BACKENDS`
    /// (comma-separated raw values, e.g. `CURLEW_BACKENDS=dispatch`): `Scripts/leaks.sh` runs the
    /// conformance suite on one backend this way. Unset or naming none: all of them.
    public static var allCases: [BackendConfiguration] {
        let every: [BackendConfiguration] = [.dispatch, .dispatchEpoll, .runLoopCFSocket, .runLoopEpoll]
        guard let names = ProcessInfo.processInfo.environment["CURLEW_BACKENDS"] else { return every }
        let chosen = names.split(separator: ",").compactMap { BackendConfiguration(rawValue: String($0)) }
        return chosen.isEmpty ? every : chosen
    }
}
