import CurlewTransport
import Foundation

extension RetryPolicy {
    /// Retries that keep a test quick: up to 4 attempts, waits of 5 to 20 ms.
    public static let quickForTests = Self.quickForTests(maximumAttempts: 4)

    /// Retries that keep a test quick: up to `maximumAttempts` attempts, waits of 5 to 20 ms.
    public static func quickForTests(maximumAttempts: Int) -> RetryPolicy {
        RetryPolicy(maximumAttempts: maximumAttempts, initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(20))
    }
}
