import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// `TransferEngine.execute(_:retry:)` draws its retries on a budget: a server that fails every
/// request sees at most 1.2 times the load (plus the budget's minimum).
@Suite("Retry budget: the engine")
struct RetryBudgetTests {
    static let storm = 500
    static let eager = RetryPolicy(maximumAttempts: 3, initialBackoff: .zero, maximumBackoff: .zero)

    @Test("500 concurrent executes against a server that always answers 503: at most 500 × 1.2 + 10 requests",
          arguments: BackendConfiguration.allCases)
    func storm(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withEngine(backend) { engine in
            #expect(engine.retryBudget.retryRatio == 0.2 && engine.retryBudget.minimumRetries == 10)
            // A window no test outlasts, so no count ages out however slow the machine: the bound is exact.
            let budget = RetryBudget(window: .seconds(3_600))
            let key = uniqueKey("engine-storm", backend)
            let request = try TransferRequest.get(.flaky(key: key, failures: 1_000_000_000))
            let statuses = await withTaskGroup(of: Int?.self) { group in
                for _ in 0..<Self.storm {
                    group.addTask { try? await engine.execute(request, retry: Self.eager, budget: budget).head.status.code }
                }
                return await group.reduce(into: [Int?]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 503 }, "a refused retry returns the last response")
            let requests = server.requests(forKey: key)
            print("retry storm | engine | \(backend.rawValue) | \(Self.storm) executes → \(requests) requests")
            #expect(requests <= Self.storm * 12 / 10 + 10)
            #expect(requests >= Self.storm + 10, "the budget's minimum was not spent")
        }
    }
}
