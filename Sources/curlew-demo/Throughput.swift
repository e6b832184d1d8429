import CurlewTransport
import Foundation

/// One backend's result for N small GETs with C in flight.
struct ThroughputResult {
    var backend: String
    var requests: Int
    var errors: Int
    var seconds: Double
    var cpuMicrosecondsPerRequest: Double

    var requestsPerSecond: Double { Double(self.requests) / self.seconds }

    static func table(_ rows: [ThroughputResult]) -> String {
        var lines = ["| backend | requests/s | CPU µs/request | errors |", "|---|---:|---:|---:|"]
        for row in rows {
            lines.append("| \(row.backend) | \(Int(row.requestsPerSecond)) | \(Int(row.cpuMicrosecondsPerRequest)) | \(row.errors) |")
        }
        return lines.joined(separator: "\n")
    }
}

/// Keeps `concurrency` transfers in flight, starting the next from each completion.
enum Throughput {
    static func measure(backend: String, engine: TransferEngine, url: URL, requests: Int, concurrency: Int) async -> ThroughputResult {
        let driver = LoadDriver(engine: engine, request: TransferRequest(url: url), total: requests)
        let cpuBefore = processCPUTime()
        let start = ContinuousClock.now
        await driver.run(concurrency: concurrency)
        let seconds = (ContinuousClock.now - start).seconds
        let cpu = processCPUTime() - cpuBefore
        return ThroughputResult(backend: backend, requests: requests, errors: driver.errors,
                                seconds: seconds, cpuMicrosecondsPerRequest: cpu * 1e6 / Double(requests))
    }

    /// User plus system CPU time of the whole process, in seconds.
    static func processCPUTime() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// Starts transfers until `total` have been started, one per completion.
///
/// Safety: `@unchecked Sendable` because its counters are guarded by `state`'s lock and
/// `continuation` is set before the first transfer starts and read once, under the same lock.
private final class LoadDriver: TransferDelegate, @unchecked Sendable {
    private struct State {
        var started = 0
        var finished = 0
        var errors = 0
        var continuation: CheckedContinuation<Void, Never>?
    }

    private let engine: TransferEngine
    private let request: TransferRequest
    private let total: Int
    private let state = Locked(State())

    init(engine: TransferEngine, request: TransferRequest, total: Int) {
        self.engine = engine
        self.request = request
        self.total = total
    }

    var errors: Int { self.state.withLock { $0.errors } }

    func run(concurrency: Int) async {
        await withCheckedContinuation { continuation in
            self.state.withLock { $0.continuation = continuation }
            for _ in 0..<min(concurrency, self.total) { self.startNext() }
        }
    }

    private func startNext() {
        let shouldStart = self.state.withLock { state -> Bool in
            guard state.started < self.total else { return false }
            state.started += 1
            return true
        }
        if shouldStart { self.engine.makeTransfer(self.request, delegate: self).start() }
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        let done: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            state.finished += 1
            if case .failure = result { state.errors += 1 }
            guard state.finished == self.total else { return nil }
            defer { state.continuation = nil }
            return state.continuation
        }
        if let done {
            done.resume()
        } else {
            self.startNext()
        }
    }
}
