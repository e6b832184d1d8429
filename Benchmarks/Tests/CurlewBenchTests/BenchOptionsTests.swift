import BenchKit
import Testing

@Suite("The clients' command line")
struct BenchOptionsTests {
    private let base = ["--client", "c", "--url", "http://127.0.0.1:1/", "--scenario", "get", "--concurrency", "10000"]

    @Test("--connections caps the connections; without it they follow the concurrency")
    func connections() throws {
        #expect(try BenchOptions.parse(self.base).connections == 10_000)
        #expect(try BenchOptions.parse(self.base + ["--connections", "64"]).connections == 64)
    }

    @Test("--connections below 1 or not a number is a usage error")
    func badConnections() {
        #expect(throws: UsageError.self) { try BenchOptions.parse(self.base + ["--connections", "0"]) }
        #expect(throws: UsageError.self) { try BenchOptions.parse(self.base + ["--connections", "many"]) }
    }
}
