import Curlew
import CurlewTesting
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// The manager's retry budget: a server that fails every request sees at most 1.2 times the load
/// (plus the budget's minimum), not three times, however many requests retry at once.
@Suite("RequestOperationManager: retry budget")
struct ManagerRetryBudgetTests {
    /// Concurrent requests in a storm.
    static let storm = 500
    /// Three attempts with no wait between them: only the budget holds the retries back.
    static let eager = RetryPolicy(maximumAttempts: 3, initialBackoff: .zero, maximumBackoff: .zero)

    @Test("a manager has a budget of its own by default, handed to each operation; nil turns it off")
    func defaults() throws {
        let stub = StubTransport()
        let api = RequestOperationManager(baseURL: URL(string: "https://api.example.com/"), transport: stub)
        let other = RequestOperationManager(baseURL: URL(string: "https://api.example.com/"), transport: stub)
        let budget = try #require(api.retryBudget)
        #expect(budget.retryRatio == 0.2 && budget.minimumRetries == 10 && budget.window == .seconds(10))
        #expect(other.retryBudget !== budget, "two managers share a budget by default")
        let request = try api.request(.get, "x")
        #expect(api.operation(with: request, success: nil, failure: nil).retryBudget === budget)
        api.retryBudget = nil
        #expect(api.operation(with: request, success: nil, failure: nil).retryBudget == nil)
    }

    /// Sends ``storm`` GETs at once to a route that always answers 503; returns the requests the
    /// server counted.
    static func runStorm(_ api: RequestOperationManager, _ name: String) async throws -> Int {
        let server = try testServer()
        let key = "storm-\(name)-\(UUID().uuidString.prefix(8))"
        let path = Route.flaky(key: key, failures: 1_000_000_000).path
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<Self.storm {
                group.addTask { _ = try? await api.data(.get, path) }
            }
        }
        let requests = server.requests(forKey: key)
        print("retry storm | manager | \(name) | \(Self.storm) GETs → \(requests) requests")
        return requests
    }

    @Test("500 concurrent GETs against a server that always answers 503: at most 500 × 1.2 + 10 requests",
          arguments: BackendConfiguration.allCases)
    func storm(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            api.retryPolicy = Self.eager
            // A window no test outlasts, so no count ages out however slow the machine: the bound is exact.
            api.retryBudget = RetryBudget(window: .seconds(3_600))
            let requests = try await Self.runStorm(api, "\(backend.rawValue)-budget")
            #expect(requests <= Self.storm * 12 / 10 + 10)
            #expect(requests >= Self.storm + 10, "the budget's minimum was not spent")
        }
    }

    @Test("without a budget every retry is made: three times the requests", arguments: BackendConfiguration.allCases)
    func stormWithoutBudget(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            api.retryPolicy = Self.eager
            api.retryBudget = nil
            let requests = try await Self.runStorm(api, "\(backend.rawValue)-none")
            #expect(requests == Self.storm * 3)
        }
    }
}
