import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import MetricsTestKit
import Testing

/// The pool meters of a manager with a metrics backend: connections open and transfers waiting for a
/// connection, sampled from its engine, on every backend.
@Suite("RequestOperationManager: pool gauges")
struct PoolGaugeTests {
    @Test("connections open and transfers waiting, while requests hold the only connection and after", arguments: BackendConfiguration.allCases)
    func poolGauges(_ backend: BackendConfiguration) async throws {
        let metrics = TestMetrics()
        var configuration = TransferEngine.Configuration()
        configuration.maximumConnectionsPerHost = 1
        try await withObservedManager(backend, configuration: configuration, metricsFactory: metrics) { api, _ in
            func meter(_ label: String) -> Double? {
                (try? metrics.expectMeter(label))?.lastValue
            }
            // Three uploads whose bodies do not end until released: the first holds the one
            // connection to the host, the other two wait for it.
            let bodies = (0..<3).map { _ in HeldBody() }
            let uploads = bodies.map { body in
                Task { try await api.upload(body.chunks, to: "echo", as: Echo.self) }
            }
            #expect(await waitUntil {
                meter(RequestMetricsLabels.transfersWaiting) == 2 && meter(RequestMetricsLabels.connectionsOpen) == 1
            }, "waiting \(String(describing: meter(RequestMetricsLabels.transfersWaiting))), open \(String(describing: meter(RequestMetricsLabels.connectionsOpen)))")
            for body in bodies { body.release() }
            for upload in uploads {
                let echo = try await upload.value
                #expect(echo.bodyLength == 2048)
            }
            #expect(await waitUntil { meter(RequestMetricsLabels.transfersWaiting) == 0 })
        }
    }
}
