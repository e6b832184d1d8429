import BenchKit
import Foundation
import Testing
@testable import curlew_bench

@Suite("The stream scenario: counted runs, byte counts, memory at start-up and at peak")
struct StreamScenarioTests {
    private static func run(_ scenario: MatrixScenario, client: String = "curl-c", repeatNumber: Int = 1) throws -> PlannedRun {
        let client = try #require(BenchClient.all.first { $0.name == client })
        return PlannedRun(index: 0, repeatNumber: repeatNumber, scenario: scenario, concurrency: 1, client: client)
    }

    private static func size(requests: Int? = nil, warmup: Int? = nil) -> RunSize {
        RunSize(durationSeconds: 2, requests: requests, warmupRequests: warmup, idleSeconds: 10, threadsRequests: 2_000,
                threadsDelayMilliseconds: 1_000, timeoutSeconds: nil)
    }

    private static func value(of flag: String, in arguments: [String]) -> String? {
        arguments.firstIndex(of: flag).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    }

    @Test("a streamed run is counted, not timed: 3 bodies after 1 warm-up, --requests only lowers the count")
    func countedRun() throws {
        let run = try Self.run(.stream)
        let arguments = ClientInvocation.arguments(for: run, url: "http://127.0.0.1:1/1g", caFile: nil, size: Self.size())
        #expect(Self.value(of: "--scenario", in: arguments) == "stream")
        #expect(Self.value(of: "--requests", in: arguments) == "3")
        #expect(Self.value(of: "--warmup-requests", in: arguments) == "1")
        #expect(!arguments.contains("--duration-seconds"))

        let fewer = ClientInvocation.arguments(for: run, url: "u", caFile: nil, size: Self.size(requests: 1, warmup: 200))
        #expect(Self.value(of: "--requests", in: fewer) == "1")
        #expect(Self.value(of: "--warmup-requests", in: fewer) == "1")
        let capped = ClientInvocation.arguments(for: run, url: "u", caFile: nil, size: Self.size(requests: 10_000, warmup: 0))
        #expect(Self.value(of: "--requests", in: capped) == "3")
        #expect(Self.value(of: "--warmup-requests", in: capped) == "0")

        // The 16 MiB scenario stays timed.
        let timed = ClientInvocation.arguments(for: try Self.run(.get16m), url: "u", caFile: nil, size: Self.size())
        #expect(Self.value(of: "--duration-seconds", in: timed) == "2")
        #expect(!timed.contains("--requests"))
    }

    @Test("a streamed run's time limit allows 25 MB/s for every body it moves")
    func timeLimit() {
        let size = Self.size()
        #expect(size.timeLimit(for: .stream, concurrency: 1) >= 60 + 4 * 1_073_741_824 / 25e6)
        #expect(size.timeLimit(for: .get16m, concurrency: 1) == 68)
    }

    @Test("1 GiB bodies in the full matrix, 64 MiB ones in --quick, from nginx's sparse files or the embedded /bytes")
    func sizesAndPaths() throws {
        #expect(MatrixScenario.stream.resource.bodyBytes == 1 << 30)
        let quick = try #require(MatrixScenario.quick.first { $0.id == "stream" })
        #expect(quick.resource.bodyBytes == 64 << 20)
        #expect(quick.title.contains("64 MiB"))
        #expect(try MatrixOptions.parse(["--quick", "--scenarios", "stream"]).selectedScenarios().map(\.resource) == [.mebibytes64])
        #expect(try MatrixOptions.parse(["--scenarios", "stream"]).selectedScenarios().map(\.resource) == [.gibibyte])

        let nginx = ServerEndpoint(kind: .nginx, label: "nginx", plainBase: "http://127.0.0.1:8", caFile: nil, layout: .nginx)
        let embedded = ServerEndpoint(kind: .embedded, label: "e", plainBase: "http://127.0.0.1:9", caFile: nil, layout: .embedded)
        #expect(nginx.url(for: .gibibyte, over: .plain, delayMilliseconds: 0) == "http://127.0.0.1:8/1g")
        #expect(nginx.url(for: .mebibytes64, over: .plain, delayMilliseconds: 0) == "http://127.0.0.1:8/64m")
        #expect(embedded.url(for: .gibibyte, over: .plain, delayMilliseconds: 0) == "http://127.0.0.1:9/bytes/1073741824")
    }

    @Test("wrk and the batch clients stay out; URLSession and the operations take part (and answer n/a)")
    func participants() throws {
        let names = RunPlan.make(scenarios: [.stream], clients: BenchClient.all, repeats: 1).map(\.client.name)
        #expect(!names.contains("wrk"))
        #expect(!names.contains { $0.hasSuffix("-batch") })
        for name in ["curl-c", "curlew-dispatch-epoll-engine", "curlew-runloop-epoll-engine", "curlew-dispatch-epoll-manager",
                     "async-http-client", "urlsession", "curlew-dispatch-epoll"] {
            #expect(names.contains(name), "\(name)")
        }
    }

    @Test("bodies that add up pass; a short or long count fails with the figures; errors are judged elsewhere")
    func byteCounts() {
        var result = OutputParserTests.result
        result.errors = 0
        result.requests = 3
        result.bytesReceived = 3 << 30
        #expect(BodyBytesCheck.problem(in: result, bodyBytes: 1 << 30) == nil)
        result.bytesReceived -= 1
        let short = BodyBytesCheck.problem(in: result, bodyBytes: 1 << 30)
        #expect(short == "3221225471 body bytes arrived in 3 responses of 1073741824 bytes (3221225472 expected)")
        result.bytesReceived += 2
        #expect(BodyBytesCheck.problem(in: result, bodyBytes: 1 << 30) != nil)
        result.errors = 1
        #expect(BodyBytesCheck.problem(in: result, bodyBytes: 1 << 30) == nil)
        result.errors = 0
        result.requests = Int.max
        #expect(BodyBytesCheck.problem(in: result, bodyBytes: 1 << 30) != nil)
    }

    @Test("the start-up RSS is optional in a result line: present from the clients that measure it, absent from older ones")
    func startupRSSInResultLine() throws {
        var result = OutputParserTests.result
        result.errors = 0
        result.startupRSSKiB = 9_000
        let withStartup = try OutputParserTests.line(result)
        #expect(withStartup.contains("\"startupRSSKiB\":9000"))
        #expect(try ClientOutputParser.parse(withStartup, client: "curl-c", scenario: "get", concurrency: 16).get().startupRSSKiB == 9_000)
        let older = withStartup.replacingOccurrences(of: ",\"startupRSSKiB\":9000", with: "")
            .replacingOccurrences(of: "\"startupRSSKiB\":9000,", with: "")
        #expect(!older.contains("startupRSSKiB"))
        #expect(try ClientOutputParser.parse(older, client: "curl-c", scenario: "get", concurrency: 16).get().startupRSSKiB == nil)
    }

    @Test("the aggregate has the RSS at start-up and the peak's growth over it, per run, for the clients that report it")
    func memoryAggregates() throws {
        func record(_ client: String, repeatNumber: Int, peakKiB: Int64, startupKiB: Int64?) -> RunRecord {
            let result = ClientResult(
                client: client, scenario: "stream", concurrency: 1, requests: 3, errors: 0, elapsedSeconds: 3,
                bytesReceived: 3 << 30, latency: .zero, cpuUserMicros: 1, cpuSystemMicros: 1, maxRSSKiB: peakKiB,
                threadsPeak: 2, voluntaryContextSwitches: 1, involuntaryContextSwitches: 1, startupRSSKiB: startupKiB)
            return RunRecord(
                scenario: "stream", concurrency: 1, client: client, repeatNumber: repeatNumber, status: .ok, reason: nil,
                url: "u", server: "s", result: result, unavailable: [], processUsage: .zero, termination: "exit 0",
                wallSeconds: 4, commandLine: [])
        }
        let records = [
            record("curl-c", repeatNumber: 1, peakKiB: 10_240, startupKiB: 8_192),
            record("curl-c", repeatNumber: 2, peakKiB: 12_288, startupKiB: 8_192),
            record("async-http-client", repeatNumber: 1, peakKiB: 40_960, startupKiB: nil),
        ]
        let clients = BenchClient.all.filter { ["curl-c", "async-http-client"].contains($0.name) }
        let rows = Aggregator.aggregate(records, scenarios: [.stream], clients: clients)
        let curl = try #require(rows.first { $0.client == "curl-c" })
        #expect(curl.startupRSSMiB?.median == 8)
        #expect(curl.rssGrowthMiB?.min == 2 && curl.rssGrowthMiB?.max == 4)
        #expect(curl.maxRSSMiB?.median == 11)
        #expect(curl.megabytesPerSecond?.median == Double(3 << 30) / 3 / 1e6)
        let client = try #require(rows.first { $0.client == "async-http-client" })
        #expect(client.startupRSSMiB == nil && client.rssGrowthMiB == nil)
        #expect(client.ratioToCurlC?.median == 1)
    }

    @Test("the clients parse the stream scenario")
    func clientOptions() throws {
        let options = try BenchOptions.parse(["--client", "c", "--url", "http://127.0.0.1:1/1g", "--scenario", "stream",
                                              "--concurrency", "1", "--requests", "3", "--warmup-requests", "1"])
        #expect(options.scenario == .stream)
        #expect(options.requests == 3 && options.durationSeconds == nil && options.warmupRequests == 1)
        #expect(BenchOptions.usage.contains("stream"))
    }
}
