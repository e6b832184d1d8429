import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import InMemoryTracing
import Metrics
import Testing
import Tracing

/// Runs `body` with a manager on a new engine of `backend` that `monitors`, `tracer` and `metrics`
/// observe; afterwards shuts both down and checks that no transfer or socket is left.
func withObservedManager(
    _ backend: BackendConfiguration,
    configuration: TransferEngine.Configuration = TransferEngine.Configuration(),
    monitors: [any EventMonitor] = [],
    tracer: any Tracer = NoOpTracer(),
    metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance,
    _ body: (RequestOperationManager, TransferEngine) async throws -> Void
) async throws {
    let engine = TransferEngine(scheduler: backend.makeIsolatedScheduler(), configuration: configuration)
    let manager = RequestOperationManager(baseURL: try testServer().baseURL, engine: engine, metricsFactory: metricsFactory,
                                          monitors: monitors, tracer: tracer)
    do {
        try await body(manager, engine)
    } catch {
        await manager.shutdown()
        await engine.shutdown()
        throw error
    }
    await manager.shutdown()
    let before = await engine.diagnostics()
    #expect(before.liveTransfers == 0, "transfers still live when the test ended: \(before)")
    await engine.shutdown()
    let after = await engine.diagnostics()
    #expect(after.openSockets == 0, "sockets left after shutdown: \(after)")
}

/// A monitor that writes down every event of every request, by request.
final class RecordingMonitor: EventMonitor {
    /// One event, reduced to what the tests compare.
    enum Event: Sendable, Hashable {
        case began(MonitoredRequest.Dialect)
        case adapted(attempt: Int)
        case started(attempt: Int)
        case head(attempt: Int, status: Int)
        case progress(attempt: Int)
        case completed(attempt: Int, status: Int?, error: TransferError.Code?)
        case retry(after: Int, decidedBy: RetryReason.Decider, status: Int?)
        case finished(status: Int?, error: String?)
    }

    private let log = Locked<[(id: UInt64, event: Event)]>([])
    /// The attempt heads as sent, by request.
    let sentHeads = Locked<[UInt64: [HTTPRequest]]>([:])
    /// The waits of the retries, in order.
    let waits = Locked<[Duration]>([])

    /// The requests seen, in the order they began.
    var requests: [UInt64] {
        var seen: [UInt64] = []
        for entry in self.log.value where !seen.contains(entry.id) { seen.append(entry.id) }
        return seen
    }

    /// The events of request `id`, progress events after the first of each attempt left out.
    func events(_ id: UInt64) -> [Event] {
        var events: [Event] = []
        for entry in self.log.value where entry.id == id {
            if case .progress = entry.event, events.last == entry.event { continue }
            events.append(entry.event)
        }
        return events
    }

    /// The events of request `id` without progress.
    func milestones(_ id: UInt64) -> [Event] {
        self.events(id).filter { if case .progress = $0 { return false } else { return true } }
    }

    /// The events of the only request seen (none when there is not exactly one).
    var onlyRequest: [Event] {
        let requests = self.requests
        return requests.count == 1 ? self.milestones(requests[0]) : []
    }

    /// How many requests have finished.
    var finishedCount: Int {
        self.log.value.filter { if case .finished = $0.event { return true } else { return false } }.count
    }

    private func record(_ request: MonitoredRequest, _ event: Event) {
        self.log.withLock { $0.append((request.id, event)) }
    }

    func requestDidBegin(_ request: MonitoredRequest) {
        self.record(request, .began(request.dialect))
    }

    func request(_ request: MonitoredRequest, didAdapt adapted: HTTPRequest, attempt: Int) {
        self.record(request, .adapted(attempt: attempt))
    }

    func request(_ request: MonitoredRequest, didStart attempt: RequestAttempt) {
        self.sentHeads.withLock { $0[request.id, default: []].append(attempt.head) }
        self.record(request, .started(attempt: attempt.number))
    }

    func request(_ request: MonitoredRequest, didReceive head: HTTPResponse, in attempt: RequestAttempt) {
        self.record(request, .head(attempt: attempt.number, status: head.status.code))
    }

    func request(_ request: MonitoredRequest, didUpdate progress: TransferProgress, in attempt: RequestAttempt) {
        self.record(request, .progress(attempt: attempt.number))
    }

    func request(
        _ request: MonitoredRequest, didComplete attempt: RequestAttempt,
        with result: Result<TransferResponse, TransferError>, after duration: Duration?
    ) {
        switch result {
        case .success(let response):
            self.record(request, .completed(attempt: attempt.number, status: response.head.status.code, error: nil))
        case .failure(let error):
            self.record(request, .completed(attempt: attempt.number, status: nil, error: error.code))
        }
    }

    func request(_ request: MonitoredRequest, willRetryAfter wait: Duration, because reason: RetryReason) {
        self.waits.withLock { $0.append(wait) }
        self.record(request, .retry(after: reason.attempt, decidedBy: reason.decidedBy, status: try? reason.outcome.get().status.code))
    }

    func request(_ request: MonitoredRequest, didFinishWith result: Result<TransferResponse, any Error>) {
        switch result {
        case .success(let response):
            self.record(request, .finished(status: response.head.status.code, error: nil))
        case .failure(let error as TransferError):
            self.record(request, .finished(status: nil, error: error.code.rawValue))
        case .failure(let error as ResponseSerializationError):
            self.record(request, .finished(status: error.response.status.code, error: "ResponseSerializationError"))
        case .failure(let error):
            self.record(request, .finished(status: nil, error: String(describing: type(of: error))))
        }
    }
}

/// `InMemoryTracer` with W3C trace context: 32 and 16 hex digit identifiers, and `traceparent`
/// injected as an OpenTelemetry tracer injects it.
struct W3CTestTracer: Tracer {
    let recorder = InMemoryTracer(idGenerator: W3CTestTracer.hexIdentifiers(), recordInjections: false, recordExtractions: false)

    /// The spans that have ended.
    var finishedSpans: [FinishedInMemorySpan] { self.recorder.finishedSpans }
    /// The spans still open.
    var activeSpans: [InMemorySpan] { self.recorder.activeSpans }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        self.recorder.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject(Self.traceparent(traceID: span.traceID, spanID: span.spanID), forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}

    static func traceparent(traceID: String, spanID: String) -> String {
        "00-\(traceID)-\(spanID)-01"
    }

    private static func hexIdentifiers() -> InMemoryTracer.IDGenerator {
        let counter = Locked<UInt64>(0)
        @Sendable func next(_ digits: Int) -> String {
            let value = counter.withLock { $0 += 1; return $0 }
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: digits - hex.count) + hex
        }
        return InMemoryTracer.IDGenerator(nextTraceID: { next(32) }, nextSpanID: { next(16) })
    }
}

