import Curlew
import ServiceLifecycle

/// A manager runs as a swift-service-lifecycle `Service`, so that a server stops it in order with
/// everything else on shutdown:
///
/// ```swift
/// let api = RequestOperationManager(baseURL: URL(string: "https://api.example.com/")!)
/// let group = ServiceGroup(configuration: ServiceGroupConfiguration(
///     services: [.init(service: api), .init(service: server)],   // the server stops first, then the client
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger))
/// try await group.run()
/// ```
extension RequestOperationManager: Service {
    /// Waits for the service group's graceful shutdown, then drains: the manager takes no new request
    /// and lets those in flight finish (`RequestOperationManager.shutdownGracefully()`); when the task
    /// is cancelled — the group's `maximumGracefulShutdownDuration` passed, or the group was
    /// cancelled — those still running are cancelled. Returns once the manager is shut down.
    ///
    /// A group shuts its services down in the reverse of their order, each after the one behind it has
    /// returned: list the manager before the services that send requests with it, and their requests
    /// end before the manager stops taking any.
    public func run() async throws {
        try? await gracefulShutdown()  // returns on graceful shutdown; throws when the task is cancelled
        await self.shutdownGracefully()
    }
}
