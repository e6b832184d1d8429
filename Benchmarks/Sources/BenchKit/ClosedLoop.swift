import Foundation

/// The closed-loop load driver: keeps exactly `concurrency` requests in flight, starting the next one
/// on each completion, and measures the phase between the warm-up and the end.
///
/// Phases:
///
/// 1. **warm-up**: requests run, nothing is measured. It ends after `warmupRequests` completions
///    (or when the harness calls ``startMeasuring()``: immediately with no warm-up, after a settle
///    delay for `idle`).
/// 2. **measuring**: each completion's latency (ticket admission to completion) goes into the
///    histogram, errors and body bytes are counted. The phase starts with a snapshot of the time and
///    the process's `getrusage`, and ends after `requests` completions, when `durationSeconds` have
///    passed (checked on each completion, and by ``stopMeasuring()`` from the harness's timer), with
///    a second snapshot. Requests in flight stay so until completion.
/// 3. **draining**: no more requests are admitted; the ones in flight finish (not measured).
///
/// Completions arrive on the clients' contexts; everything is decided under one lock, which costs
/// the same for every client and is uncontended when completions come from one thread.
///
/// `@unchecked Sendable`: all mutable state is guarded by `lock`; the callbacks are set before the
/// load starts and only read afterwards.
public final class ClosedLoop: @unchecked Sendable {
    /// What the measured phase produced.
    public struct Measurement: Sendable {
        /// Completions (successes and errors).
        public var requests = 0
        /// Failed completions.
        public var errors = 0
        /// Response body bytes of the completions.
        public var bytesReceived: Int64 = 0
        /// Wall time of the phase, seconds.
        public var elapsedSeconds = 0.0
        /// Latency percentiles, microseconds.
        public var latency = Percentiles.zero
        /// `getrusage(RUSAGE_SELF)` over the phase, minus the thread sampler's own share.
        public var usage = ResourceUsage()
        /// The most threads seen (sampler excluded), from the start of the run to the end of the phase.
        public var threadsPeak = 0
    }

    private enum Phase {
        case warmup
        case measuring
        case draining
    }

    private struct Snapshot {
        var nanoseconds: UInt64
        var process: ResourceUsage
        var sampler: ResourceUsage
    }

    /// The options of the run.
    public let options: BenchOptions
    private let sampler: ThreadSampler
    private let lock = NSLock()
    private let recordsLatency: Bool
    private let warmupTarget: Int?

    // Guarded by `lock`:
    private var phase = Phase.warmup
    private var inFlight = 0
    private var warmupCompleted = 0
    private var warmupErrors = 0
    private var measuredRequests = 0
    private var measuredErrors = 0
    private var measuredBytes: Int64 = 0
    private var histogram = LatencyHistogram()
    private var start: Snapshot?
    private var deadline: UInt64?
    private var result: Measurement?
    private var errorSamples: [String] = []

    /// Called (outside the lock, on the thread that started it) once the measured phase started,
    /// with its start in `MonotonicClock` nanoseconds.
    public var onMeasuringStarted: (@Sendable (UInt64) -> Void)?
    /// Called (outside the lock) once the measured phase ended.
    public var onMeasuringEnded: (@Sendable () -> Void)?
    /// Called (outside the lock) when the loop is draining and nothing is in flight any more.
    public var onDrained: (@Sendable () -> Void)?

    /// Creates a loop for `options`.
    ///
    /// - Parameters:
    ///   - sampler: The thread sampler, whose peak and own usage the measurement uses.
    ///   - automaticWarmupEnd: Whether the measured phase starts by itself after `warmupRequests`
    ///     completions (when `false`, or with no warm-up, the harness calls ``startMeasuring()``).
    public init(options: BenchOptions, sampler: ThreadSampler, automaticWarmupEnd: Bool) {
        self.options = options
        self.sampler = sampler
        self.recordsLatency = options.scenario.measuresLatency
        self.warmupTarget = automaticWarmupEnd && options.warmupRequests > 0 ? options.warmupRequests : nil
    }

    /// Whether the measured phase is running (the lateness ticker records only then).
    public var isMeasuring: Bool {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.phase == .measuring
    }

    /// The measured phase's figures, once it has ended.
    public var measurement: Measurement? {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.result
    }

    /// Requests in flight now.
    public var requestsInFlight: Int {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.inFlight
    }

    /// Completions and errors of the warm-up, and the first few error descriptions (for stderr).
    public var diagnostics: (warmupCompleted: Int, warmupErrors: Int, errorSamples: [String]) {
        self.lock.lock()
        defer { self.lock.unlock() }
        return (self.warmupCompleted, self.warmupErrors, self.errorSamples)
    }

    /// Admits a request if the loop wants one (warm-up or measuring): its ticket, or `nil`.
    public func admit() -> RequestTicket? {
        let now = MonotonicClock.nanoseconds()
        self.lock.lock()
        defer { self.lock.unlock() }
        guard self.phase != .draining else { return nil }
        self.inFlight += 1
        return RequestTicket(loop: self, startNanoseconds: now)
    }

    /// Starts the measured phase now, if it has not started yet.
    public func startMeasuring() {
        let now = MonotonicClock.nanoseconds()
        self.lock.lock()
        let started = self.phase == .warmup
        if started { self.beginMeasuring(at: now) }
        self.lock.unlock()
        if started { self.onMeasuringStarted?(now) }
    }

    /// Ends the measured phase now, if it is running, and starts draining.
    public func stopMeasuring() {
        let now = MonotonicClock.nanoseconds()
        self.lock.lock()
        let wasWarmup = self.phase == .warmup
        var ended = false
        if self.phase == .measuring {
            self.endMeasuring(at: now)
            ended = true
        } else if wasWarmup {
            // Never measured (e.g. every warm-up request hung): an empty measurement.
            self.start = Snapshot(nanoseconds: now, process: ResourceUsage.process(), sampler: self.sampler.ownUsage)
            self.endMeasuring(at: now)
            ended = true
        }
        let drained = self.phase == .draining && self.inFlight == 0
        self.lock.unlock()
        if ended { self.onMeasuringEnded?() }
        if drained && ended { self.onDrained?() }
    }

    /// A request ended: records it, moves the phases on, and admits the next request if wanted.
    func finish(_ ticket: RequestTicket, _ outcome: RequestOutcome) -> RequestTicket? {
        let now = MonotonicClock.nanoseconds()
        var started = false
        var ended = false
        var drained = false
        var next: RequestTicket?

        self.lock.lock()
        self.inFlight -= 1
        switch self.phase {
        case .warmup:
            self.warmupCompleted += 1
            if case .failure(let reason) = outcome {
                self.warmupErrors += 1
                self.keepErrorSample(reason)
            }
            if let target = self.warmupTarget, self.warmupCompleted >= target {
                self.beginMeasuring(at: now)
                started = true
            }
        case .measuring:
            self.measuredRequests += 1
            switch outcome {
            case .success(let bytes):
                self.measuredBytes += Int64(bytes)
            case .failure(let reason):
                self.measuredErrors += 1
                self.keepErrorSample(reason)
            }
            if self.recordsLatency {
                self.histogram.record(nanoseconds: now &- ticket.startNanoseconds)
            }
            if let limit = self.options.requests, self.measuredRequests >= limit {
                self.endMeasuring(at: now)
                ended = true
            } else if let deadline = self.deadline, now >= deadline {
                self.endMeasuring(at: now)
                ended = true
            }
        case .draining:
            break
        }
        if self.phase == .draining {
            drained = self.inFlight == 0
        } else {
            self.inFlight += 1
            next = RequestTicket(loop: self, startNanoseconds: now)
        }
        self.lock.unlock()

        if started { self.onMeasuringStarted?(now) }
        if ended { self.onMeasuringEnded?() }
        if drained { self.onDrained?() }
        return next
    }

    // MARK: Under the lock

    private func beginMeasuring(at now: UInt64) {
        self.sampler.sampleNow()
        self.phase = .measuring
        self.start = Snapshot(nanoseconds: now, process: ResourceUsage.process(), sampler: self.sampler.ownUsage)
        if let seconds = self.options.durationSeconds {
            self.deadline = now + UInt64(seconds * 1e9)
        }
    }

    private func endMeasuring(at now: UInt64) {
        self.phase = .draining
        let process = ResourceUsage.process()
        let samplerUsage = self.sampler.ownUsage
        guard let start = self.start else { return }
        self.sampler.sampleNow()
        var measurement = Measurement()
        measurement.requests = self.measuredRequests
        measurement.errors = self.measuredErrors
        measurement.bytesReceived = self.measuredBytes
        measurement.elapsedSeconds = Double(now - start.nanoseconds) / 1e9
        measurement.latency = self.histogram.percentiles
        measurement.usage = process.since(start.process).excluding(samplerUsage.since(start.sampler))
        measurement.threadsPeak = self.sampler.peakThreads
        self.result = measurement
    }

    private func keepErrorSample(_ reason: String) {
        if self.errorSamples.count < 5 { self.errorSamples.append(reason) }
    }
}
