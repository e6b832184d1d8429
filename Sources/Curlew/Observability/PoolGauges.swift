import CoreMetrics
import CurlewTransport
import Dispatch

/// The connection pool of a manager's engine as two meters — connections open, transfers waiting for
/// a connection slot — read from the engine's diagnostics on a timer.
///
/// Sampling rather than reporting each change keeps the engine's paths free of any metrics call: a
/// request costs nothing more, with or without a backend, and the engine is visited once per
/// ``interval`` only while a manager with a metrics backend runs (none is made without one). A
/// scraper reads a gauge every few seconds at most, so a sample a second old is as good as a fresh one.
///
/// Safety: `@unchecked Sendable` because `timer` is a dispatch source, which is thread-safe, made once
/// and never replaced.
final class PoolGauges: @unchecked Sendable {
    /// How often the engine is read.
    static let interval: Duration = .seconds(1)

    private let timer: any DispatchSourceTimer
    private static let queue = DispatchQueue(label: "curlew.manager.pool-gauges")

    /// Starts sampling `engine` into meters of `factory`; the first sample comes after ``interval``.
    init(engine: TransferEngine, factory: any MetricsFactory) {
        let open = Meter(label: RequestMetricsLabels.connectionsOpen, dimensions: [], factory: factory)
        let waiting = Meter(label: RequestMetricsLabels.transfersWaiting, dimensions: [], factory: factory)
        let timer = DispatchSource.makeTimerSource(queue: Self.queue)
        let (seconds, attoseconds) = Self.interval.components
        let interval = DispatchTimeInterval.nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.setEventHandler { [weak engine] in
            guard let engine else { return }
            Task {
                let diagnostics = await engine.diagnostics()
                open.set(diagnostics.openSockets)
                waiting.set(diagnostics.transfersWaitingForConnection)
            }
        }
        timer.resume()
        self.timer = timer
    }

    /// Stops sampling (a sample under way still records).
    func stop() {
        self.timer.cancel()
    }

    deinit {
        self.timer.cancel()
    }
}
