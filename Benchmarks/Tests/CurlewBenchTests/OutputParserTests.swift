import BenchKit
import Foundation
import Testing
@testable import curlew_bench

@Suite("Parsing what clients print")
struct OutputParserTests {
    static let result = ClientResult(
        client: "curl-c", scenario: "get", concurrency: 16, requests: 1_000, errors: 2, elapsedSeconds: 0.5,
        bytesReceived: 13_000, latency: Percentiles(p50: 100, p90: 200, p99: 300, p999: 400, max: 500),
        cpuUserMicros: 10_000, cpuSystemMicros: 5_000, maxRSSKiB: 20_000, threadsPeak: 3,
        voluntaryContextSwitches: 10, involuntaryContextSwitches: 1)

    static func line(_ result: ClientResult) throws -> String {
        String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
    }

    @Test("the last JSON line of the output is the result")
    func lastJSONLine() throws {
        let output = "warming up\n{\"not\": \"this one\"}\n" + (try Self.line(Self.result)) + "\ndone\n"
        let parsed = try ClientOutputParser.parse(output, client: "curl-c", scenario: "get", concurrency: 16).get()
        #expect(parsed == Self.result)
        #expect(parsed.requestsPerSecond == 2_000)
        #expect(parsed.cpuMicrosPerRequest == 15)
    }

    @Test("a result for another question, or none at all, is a failure with a reason", arguments: [
        ("curlew-dispatch", "get", 16, "reported client"),
        ("curl-c", "post", 16, "reported scenario"),
        ("curl-c", "get", 1, "reported concurrency"),
    ])
    func wrongAnswer(client: String, scenario: String, concurrency: Int, reason: String) throws {
        let output = try Self.line(Self.result)
        guard case .failure(let failure) = ClientOutputParser.parse(output, client: client, scenario: scenario, concurrency: concurrency) else {
            Issue.record("accepted a result for another question")
            return
        }
        #expect(failure.reason.contains(reason), "\(failure.reason)")
    }

    @Test("empty output, garbage and implausible numbers never trap")
    func badOutput() throws {
        var implausible = Self.result
        implausible.errors = 5_000
        var negative = Self.result
        negative.elapsedSeconds = -1
        for output in ["", "{", "{\"client\": 1}", try Self.line(implausible), try Self.line(negative)] {
            guard case .failure(let failure) = ClientOutputParser.parse(output, client: "curl-c", scenario: "get", concurrency: 16) else {
                Issue.record("accepted \(output.prefix(40))")
                continue
            }
            #expect(!failure.reason.isEmpty)
        }
    }

    @Test("wrk's report: throughput, latency in microseconds, bytes in powers of 1,024, errors summed")
    func wrkReport() throws {
        let text = """
            Running 5s test @ http://127.0.0.1:18080/small
              1 threads and 16 connections
              Thread Stats   Avg      Stdev     Max   +/- Stdev
                Latency   150.00us   50.00us   2.00ms   90.00%
              Latency Distribution
                 50%  148.00us
                 75%  160.00us
                 90%  180.00us
                 99%    1.10ms
              492500 requests in 5.00s, 120.00MB read
              Socket errors: connect 1, read 2, write 0, timeout 3
              Non-2xx or 3xx responses: 5
            Requests/sec:  98500.00
            Transfer/sec:     24.00MB
            """
        let report = try WrkOutputParser.parse(text).get()
        #expect(report.requests == 492_500)
        #expect(report.seconds == 5)
        #expect(report.bytesRead == 120 * 1_048_576)
        #expect(report.p50 == 148 && report.p75 == 160 && report.p90 == 180 && report.p99 == 1_100)
        #expect(report.max == 2_000)
        #expect(report.errors == 11)
        #expect(report.requestsPerSecond == 98_500)
    }

    @Test("wrk output without a latency distribution or a total is refused")
    func wrkIncomplete() {
        let withoutLatency = "1000 requests in 1.00s, 1.00MB read\nRequests/sec:  1000.00\n"
        if case .success = WrkOutputParser.parse(withoutLatency) { Issue.record("no --latency accepted") }
        if case .success = WrkOutputParser.parse("connection refused") { Issue.record("garbage accepted") }
        #expect(WrkOutputParser.microseconds("1.50s") == 1_500_000)
        #expect(WrkOutputParser.microseconds("-1ms") == nil)
        #expect(WrkOutputParser.bytes("2.00KB") == 2_048)
    }

    @Test("a summary is the median and range of the finite values")
    func summary() throws {
        let odd = try #require(Summary([3, 1, 2, .nan]))
        #expect(odd.median == 2 && odd.min == 1 && odd.max == 3 && odd.count == 3)
        let even = try #require(Summary([4, 1, 3, 2]))
        #expect(even.median == 2.5)
        #expect(even.spreadPercent == 60)
        #expect(Summary([.infinity]) == nil)
        #expect(try #require(Summary([7])).spreadPercent == 0)
    }
}
