import Foundation

/// One run of one client, orchestrated on the main thread: fill the closed loop, start and stop
/// the measured phase on time, drain, shut the client down, assemble the ``ClientResult``.
///
/// `@unchecked Sendable`: `finishing` and `isDone` are guarded by `lock`; `ticker` is touched on
/// the main thread only; everything else is immutable.
final class ClientRun: @unchecked Sendable {
    private let options: BenchOptions
    private let client: any LoadClient
    private let sampler: ThreadSampler
    private let loop: ClosedLoop
    private let ticker: MainThreadTicker?
    private let lock = NSLock()
    private var finishing = false
    private var isDone = false
    private var remarks: [String] = []
    private let startupRSSKiB: Int64?

    init(options: BenchOptions, client: any LoadClient, sampler: ThreadSampler, startupRSSKiB: Int64?) {
        self.options = options
        self.startupRSSKiB = startupRSSKiB
        self.client = client
        self.sampler = sampler
        self.loop = ClosedLoop(options: options, sampler: sampler, automaticWarmupEnd: options.scenario != .idle)
        self.ticker = options.scenario == .lateness ? MainThreadTicker(loop: self.loop) : nil
    }

    /// Runs the load to the end and returns the result. Call on the main thread.
    func execute() -> ClientResult {
        let options = self.options
        let loop = self.loop
        loop.onMeasuringStarted = { [self] startNanoseconds in
            guard let seconds = options.durationSeconds else { return }
            MainRunLoop.perform {
                let elapsed = Double(MonotonicClock.nanoseconds() - startNanoseconds) / 1e9
                MainRunLoop.after(seconds: seconds - elapsed) { self.loop.stopMeasuring() }
            }
        }
        loop.onMeasuringEnded = { [self] in
            MainRunLoop.perform {
                self.sampler.stop()
                self.ticker?.invalidate()
                if options.scenario == .idle {
                    // The slow requests are not worth waiting for: cancel them.
                    self.finish(reason: nil)
                } else {
                    MainRunLoop.after(seconds: BenchClientMain.drainTimeoutSeconds) {
                        self.finish(reason: "the requests in flight after the measured phase did not finish within \(Int(BenchClientMain.drainTimeoutSeconds)) s")
                    }
                }
            }
        }
        loop.onDrained = { [self] in
            MainRunLoop.perform { self.finish(reason: nil) }
        }

        self.ticker?.install()
        if options.scenario != .idle && options.warmupRequests == 0 { loop.startMeasuring() }
        for _ in 0..<options.concurrency {
            guard let ticket = loop.admit() else { break }
            self.client.start(ticket)
        }
        if options.scenario == .idle {
            MainRunLoop.after(seconds: BenchOptions.idleSettleSeconds) { loop.startMeasuring() }
        } else if options.warmupRequests > 0 {
            // A client that collapses under the load (thread-per-operation at 1,024 in flight) would
            // otherwise spend the runner's whole time limit warming up: measure it as it is.
            MainRunLoop.after(seconds: BenchOptions.maximumWarmupSeconds) { [self] in
                let completed = loop.diagnostics.warmupCompleted
                guard completed < options.warmupRequests else { return }
                self.lock.withLock {
                    self.remarks.append("the warm-up ended after \(Int(BenchOptions.maximumWarmupSeconds)) s with \(completed) of \(options.warmupRequests) requests")
                }
                loop.startMeasuring()
            }
        }

        MainRunLoop.run { self.lock.withLock { self.isDone } }
        return self.result()
    }

    /// Shuts the client down once (main thread), then ends the main loop.
    private func finish(reason: String?) {
        let first: Bool = self.lock.withLock {
            defer { self.finishing = true }
            if let reason { self.remarks.append(reason) }
            return !self.finishing
        }
        guard first else { return }
        let done: @Sendable () -> Void = { [self] in
            MainRunLoop.perform {
                self.lock.withLock { self.isDone = true }
                MainRunLoop.stop()
            }
        }
        self.client.shutdown(done)
        MainRunLoop.after(seconds: BenchClientMain.shutdownTimeoutSeconds) { [self] in
            let stillRunning = self.lock.withLock { !self.isDone }
            if stillRunning {
                StandardError.write("warning: \(self.options.client) did not shut down within \(Int(BenchClientMain.shutdownTimeoutSeconds)) s")
                done()
            }
        }
    }

    private func result() -> ClientResult {
        let measurement = self.loop.measurement ?? ClosedLoop.Measurement()
        let diagnostics = self.loop.diagnostics
        var notes: [String] = []
        if let note = self.client.note { notes.append(note) }
        notes += self.lock.withLock { self.remarks }
        if diagnostics.warmupErrors > 0 || measurement.errors > 0 {
            StandardError.write(
                "\(self.options.client): \(diagnostics.warmupErrors) warm-up errors, \(measurement.errors) measured errors; "
                    + "first: \(diagnostics.errorSamples.joined(separator: " | "))")
        }
        StandardError.write(
            "\(self.options.client) \(self.options.scenario.rawValue) c=\(self.options.concurrency): "
                + "\(measurement.requests) requests in \(String(format: "%.3f", measurement.elapsedSeconds)) s, "
                + "\(measurement.errors) errors, warm-up \(diagnostics.warmupCompleted)")
        return ClientResult(
            client: self.options.client,
            scenario: self.options.scenario.rawValue,
            concurrency: self.options.concurrency,
            requests: measurement.requests,
            errors: measurement.errors,
            elapsedSeconds: measurement.elapsedSeconds,
            bytesReceived: measurement.bytesReceived,
            latency: measurement.latency,
            cpuUserMicros: measurement.usage.userMicros,
            cpuSystemMicros: measurement.usage.systemMicros,
            maxRSSKiB: measurement.usage.maxRSSKiB,
            threadsPeak: measurement.threadsPeak,
            voluntaryContextSwitches: measurement.usage.voluntaryContextSwitches,
            involuntaryContextSwitches: measurement.usage.involuntaryContextSwitches,
            mainThreadLateness: self.ticker?.lateness,
            note: notes.isEmpty ? nil : notes.joined(separator: "; "),
            startupRSSKiB: self.startupRSSKiB)
    }
}
