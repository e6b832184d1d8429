import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing

/// Logs (swift-log) and metrics (swift-metrics) of a manager's requests, on every backend.
@Suite("RequestOperationManager: logging and metrics")
struct ObservabilityTests {
    /// A logger at `level` whose entries `handler` keeps.
    static func logger(_ handler: InMemoryLogHandler, level: Logger.Level) -> Logger {
        var logger = Logger(label: "curlew.tests", factory: { _ in handler })
        logger.logLevel = level
        return logger
    }

    @Test("start, finish and failure at debug; the wire at trace with credentials redacted; no tracer below trace",
          arguments: BackendConfiguration.allCases)
    func logging(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await withManager(backend, cookies: .inMemory) { api in
            try api.requestSerializer.setBearerToken("t0ken-never-logged")
            api.credentials = TransferCredentials(user: "ada", password: "password-never-logged")

            let debug = InMemoryLogHandler()
            api.logger = Self.logger(debug, level: .debug)
            #expect(try api.request(.get, "echo").options.wireTracer == nil, "curl is asked to trace below .trace")
            _ = try await api.get("echo", as: Echo.self)
            _ = try? await api.get(server.refusedURL.absoluteString, as: Echo.self)
            let messages = debug.entries.map { "\($0.message)" }
            #expect(debug.entries.allSatisfy { $0.level == .debug })
            #expect(messages.contains { $0.hasPrefix("GET \(server.url(.echo).absoluteString) started") }, "\(messages)")
            #expect(messages.contains { $0.hasPrefix("GET \(server.url(.echo).absoluteString) 200 in ") }, "\(messages)")
            #expect(messages.contains { $0.contains("failed after") && $0.contains("cannotConnectToHost") }, "\(messages)")

            let trace = InMemoryLogHandler()
            api.logger = Self.logger(trace, level: .trace)
            #expect(try api.request(.get, "echo").options.wireTracer != nil)
            _ = try await api.get(Route.setCookie(name: "session", value: "cookie-never-logged").path, as: Echo.self)
            _ = try await api.get("echo", as: Echo.self)
            let wire = trace.entries.filter { $0.level == .trace }.map { "\($0.message)" }
            #expect(wire.contains { $0.hasPrefix("> GET /echo HTTP/1.1") }, "\(wire)")
            #expect(wire.contains { $0.hasPrefix("< HTTP/1.1 200") }, "\(wire)")
            #expect(wire.contains { $0.contains("Authorization: <redacted>") }, "\(wire)")
            #expect(wire.contains { $0.contains("Cookie: <redacted>") }, "\(wire)")
            #expect(wire.contains { $0.lowercased().contains("set-cookie: <redacted>") }, "\(wire)")
            #expect(wire.contains { $0.hasPrefix("< [") && $0.hasSuffix("body bytes]") }, "\(wire)")
            let everything = trace.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            for secret in ["t0ken-never-logged", "password-never-logged", Data("ada:password-never-logged".utf8).base64EncodedString()] {
                #expect(!everything.contains(secret), "\(secret) was logged")
            }
            // The cookie's value is in the URL that sets it (not a secret there); no header line shows it.
            let cookieLines = wire.flatMap { $0.split(separator: "\n") }.filter { $0.lowercased().contains("cookie:") }
            #expect(cookieLines.count >= 2)
            #expect(!cookieLines.contains { $0.contains("cookie-never-logged") }, "\(cookieLines)")
        }
    }

    @Test("the instrumented transport passes each response's hand-off on to the engine's context",
          arguments: BackendConfiguration.allCases)
    func handOffsReachTheEngine(_ backend: BackendConfiguration) async throws {
        try await withSpiedManager(backend) { api, counting in
            for index in 0..<3 {
                let probe = HandlerProbe()
                api.GET("echo", parameters: ["n": "\(index)"], success: probe.success, failure: probe.failure)
                let record = await probe.waitForOneCall()
                #expect((record.object as? JSONValue)?["query"]?.stringValue == "n=\(index)")
            }
            // One hand-off per operation's response, through the manager's logging and metrics
            // wrapper: the wrapper's default would run them at once, where the engine can queue them
            // together. (The async methods hand nothing off: they serialize in the awaiting task.)
            #expect(counting.deferrals.value == 3)
        }
    }

    @Test("requests, failures by code, in flight, connections opened and reused, durations", arguments: BackendConfiguration.allCases)
    func metrics(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let metrics = TestMetrics()
        let engine = TransferEngine(scheduler: backend.makeIsolatedScheduler())
        let api = RequestOperationManager(baseURL: server.baseURL, engine: engine, metricsFactory: metrics)
        _ = try await api.get("echo", as: Echo.self)
        _ = try await api.get("echo", as: Echo.self)
        await #expect(throws: ResponseSerializationError.self) { _ = try await api.data(.get, "status/404") }
        await #expect(throws: TransferError.self) { _ = try await api.get(server.refusedURL.absoluteString, as: Echo.self) }
        await api.shutdown()
        await engine.shutdown()

        #expect(metrics.counterTotal(label: RequestMetricsLabels.requests) == 4)
        #expect(metrics.counterTotal(label: RequestMetricsLabels.requests, dimensions: [("method", "GET")]) == 4)
        #expect(metrics.counterTotal(label: RequestMetricsLabels.failures) == 1, "a 404 is a completed transfer")
        #expect(metrics.counterTotal(label: RequestMetricsLabels.failures, dimensions: [("code", "cannotConnectToHost")]) == 1)
        let opened = metrics.counterTotal(label: RequestMetricsLabels.connectionsOpened)
        let reused = metrics.counterTotal(label: RequestMetricsLabels.connectionsReused)
        #expect(opened >= 1 && reused >= 1 && opened + reused == 3, "opened \(opened), reused \(reused)")
        let inFlight = try metrics.expectMeter(RequestMetricsLabels.inFlight)
        #expect(inFlight.values.contains(1))
        #expect(inFlight.lastValue == 0)
        let durations = metrics.timers(label: RequestMetricsLabels.duration).flatMap(\.values)
        #expect(durations.count == 4 && durations.allSatisfy { $0 > 0 })
    }
}
