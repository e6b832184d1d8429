import Curlew
import Foundation

extension StubTransport {
    /// Runs `body` with a `RequestOperationManager` whose requests this stub answers, then shuts the
    /// manager down, also when `body` throws: no operation of a test outlives it, and each one it
    /// started has finished (exactly once) when this returns.
    ///
    /// ```swift
    /// let stub = StubTransport()
    /// stub.respond(to: "/v1/users/1", with: .json(#"{"id":1,"name":"Ada"}"#))
    /// let user = try await stub.withManager(baseURL: URL(string: "https://api.example.com/v1/")) { api in
    ///     try await api.get("users/1", as: User.self)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - baseURL: Where the manager resolves relative paths; none by default.
    ///   - isolation: The caller's actor, which `body` runs on (leave the default).
    ///   - body: The code under test, given the manager; runs on the caller's actor.
    /// - Returns: What `body` returned.
    public func withManager<Result>(
        baseURL: URL? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (RequestOperationManager) async throws -> Result
    ) async rethrows -> Result {
        let manager = RequestOperationManager(baseURL: baseURL, transport: self)
        do {
            let result = try await body(manager)
            await manager.shutdown()
            return result
        } catch {
            await manager.shutdown()
            throw error
        }
    }
}
