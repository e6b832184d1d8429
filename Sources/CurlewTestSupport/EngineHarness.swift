import CurlewTransport
import Testing

/// Runs `body` with a new engine on `scheduler`; afterwards checks that no transfer is left running,
/// shuts the engine down and checks that it left nothing behind (no transfer, socket, watch,
/// pending close or armed timer).
///
/// ```swift
/// @Test(arguments: BackendConfiguration.allCases)
/// func getsAResponse(_ backend: BackendConfiguration) async throws {
///     try await withEngine(on: backend.makeScheduler()) { engine in
///         // …
///     }
/// }
/// ```
///
/// - Parameters:
///   - scheduler: The new engine's scheduler (unbound).
///   - configure: Changes the engine's configuration before it is made.
///   - body: The test; an error it throws is rethrown after the engine was shut down.
public func withEngine(
    on scheduler: any TransferScheduler,
    configure: (inout TransferEngine.Configuration) -> Void = { _ in },
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (TransferEngine) async throws -> Void
) async throws {
    var configuration = TransferEngine.Configuration()
    configure(&configuration)
    let engine = TransferEngine(scheduler: scheduler, configuration: configuration)
    do {
        try await body(engine)
    } catch {
        await engine.shutdown()
        throw error
    }
    let before = await engine.diagnostics()
    #expect(before.liveTransfers == 0, "transfers still live when the test ended: \(before)", sourceLocation: sourceLocation)
    await engine.shutdown()
    let after = await engine.diagnostics()
    #expect(after.liveTransfers == 0, "transfers left after shutdown: \(after)", sourceLocation: sourceLocation)
    #expect(after.openSockets == 0, "sockets left after shutdown: \(after)", sourceLocation: sourceLocation)
    #expect(after.scheduler == SchedulerDiagnostics(), "scheduler holdings after shutdown: \(after.scheduler)",
            sourceLocation: sourceLocation)
}

/// Runs `body` with a new engine on a scheduler of `backend` — on `contexts`, when a target keeps
/// network contexts of its own (see ``PrivateContexts``) — then checks that it left nothing behind,
/// as ``withEngine(on:configure:sourceLocation:_:)`` does.
///
/// ```swift
/// @Test(arguments: BackendConfiguration.allCases)
/// func getsAResponse(_ backend: BackendConfiguration) async throws {
///     try await withEngine(backend) { engine in
///         // …
///     }
/// }
/// ```
public func withEngine(
    _ backend: BackendConfiguration,
    in contexts: PrivateContexts? = nil,
    configure: (inout TransferEngine.Configuration) -> Void = { _ in },
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (TransferEngine) async throws -> Void
) async throws {
    let scheduler = contexts.map { backend.makeScheduler(in: $0) } ?? backend.makeScheduler()
    try await withEngine(on: scheduler, configure: configure, sourceLocation: sourceLocation, body)
}
