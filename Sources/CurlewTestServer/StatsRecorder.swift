import NIOConcurrencyHelpers

/// The thread-safe home of a server's ``Stats``: every event-loop thread records into it, any thread reads it.
final class StatsRecorder: Sendable {
    private let state = NIOLockedValueBox(Stats())
    /// Requests seen per `.flaky` key.
    private let requestsByKey = NIOLockedValueBox([String: Int]())

    /// Counts a request for `key` and returns its number (from 1).
    func nextRequest(forKey key: String) -> Int {
        self.requestsByKey.withLockedValue { counts in
            counts[key, default: 0] += 1
            return counts[key, default: 0]
        }
    }

    /// How many requests came for `key`.
    func requests(forKey key: String) -> Int {
        self.requestsByKey.withLockedValue { $0[key] ?? 0 }
    }

    var snapshot: Stats {
        self.state.withLockedValue { $0 }
    }

    func reset() {
        self.state.withLockedValue { stats in
            // Open connections are a level, not a count of events: keep it across a reset.
            let open = stats.openConnections
            stats = Stats()
            stats.openConnections = open
            stats.maxOpenConnections = open
        }
    }

    func connectionAccepted(on kind: ListenerKind) {
        self.state.withLockedValue { stats in
            switch kind {
            case .plain: stats.plainConnectionsAccepted += 1
            case .tls: stats.tlsConnectionsAccepted += 1
            case .h2c: stats.h2cConnectionsAccepted += 1
            }
            stats.openConnections += 1
            stats.maxOpenConnections = max(stats.maxOpenConnections, stats.openConnections)
        }
    }

    func connectionClosed() {
        self.state.withLockedValue { $0.openConnections -= 1 }
    }

    func tlsNegotiatedHTTP2() {
        self.state.withLockedValue { $0.tlsHTTP2Connections += 1 }
    }

    func requestServed(overHTTP2: Bool) {
        self.state.withLockedValue { stats in
            stats.requestsServed += 1
            if overHTTP2 {
                stats.http2Requests += 1
            } else {
                stats.http1Requests += 1
            }
        }
    }

    func concurrentStreamsObserved(_ count: Int) {
        self.state.withLockedValue { $0.maxConcurrentStreams = max($0.maxConcurrentStreams, count) }
    }
}
