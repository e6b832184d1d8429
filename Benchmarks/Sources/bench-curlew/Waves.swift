import BenchKit
import Foundation

/// The `batch` scenario's load: requests in waves of C. The harness admits C tickets at the start
/// (the first wave); each request's completion hands back the ticket of a request for the *next*
/// wave, which waits here until the current wave is over. So C requests are queued at once, and the
/// next C only once all of them are done — a batch's shape, for `OperationClient` (plain
/// operations: the wave is over when the last one's handler ran) and `BatchClient` (one
/// `OperationBatch` per wave: over when the batch completion ran).
///
/// A ticket's latency then includes its wait for the next wave: in this scenario the figures are
/// throughput (wall time per request) and CPU per request.
///
/// `@unchecked Sendable`: `gathered` and `firstWaveStarted` are guarded by `lock`.
final class Waves: @unchecked Sendable {
    /// Requests per wave.
    let size: Int
    private let lock = NSLock()
    private var gathered: [RequestTicket] = []
    private var firstWaveStarted = false

    init(size: Int) {
        self.size = size
    }

    /// The harness admitted `ticket`: the first wave once `size` are there, else `nil`.
    func admitted(_ ticket: RequestTicket) -> [RequestTicket]? {
        self.lock.withLock {
            self.gathered.append(ticket)
            guard !self.firstWaveStarted, self.gathered.count >= self.size else { return nil }
            self.firstWaveStarted = true
            defer { self.gathered = [] }
            return self.gathered
        }
    }

    /// A request of the current wave ended: reports it and keeps the next ticket for the next wave.
    func finish(_ ticket: RequestTicket, _ outcome: RequestOutcome) {
        guard let next = ticket.finish(outcome) else { return }
        self.lock.withLock { self.gathered.append(next) }
    }

    /// The current wave is over: the next wave's tickets (fewer than `size`, or none, once the
    /// measured phase has ended and the loop stopped handing out tickets).
    func nextWave() -> [RequestTicket] {
        self.lock.withLock {
            defer { self.gathered = [] }
            return self.gathered
        }
    }
}

/// Counts a wave's requests down to its end.
///
/// `@unchecked Sendable`: `remaining` is guarded by `lock`.
final class WaveCountdown: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int

    init(_ count: Int) {
        self.remaining = count
    }

    /// One request ended; `true` for the last.
    func countDown() -> Bool {
        self.lock.withLock {
            self.remaining -= 1
            return self.remaining == 0
        }
    }
}
