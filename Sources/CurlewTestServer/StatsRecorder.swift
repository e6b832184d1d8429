import NIOConcurrencyHelpers

/// The thread-safe home of a server's ``Stats``: every event-loop thread records into it, any thread reads it.
final class StatsRecorder: Sendable {
    private let state = NIOLockedValueBox(Stats())
    /// Requests seen per `.flaky`, `.events` or `.holdUpload` key.
    private let requestsByKey = NIOLockedValueBox([String: Int]())
    /// What `.firehose` wrote per key.
    private let firehoses = NIOLockedValueBox([String: FirehoseRecord]())
    /// Per `.events` key: each request's `Last-Event-ID`, and whether the last event went out.
    private let events = NIOLockedValueBox([String: (lastEventIDs: [String?], lastEventSent: Bool)]())

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

    /// Counts `count` body bytes of a `.firehose` for `key` as handed to the kernel.
    func firehoseWrote(_ count: Int, forKey key: String) {
        self.firehoses.withLockedValue { $0[key, default: FirehoseRecord()].written += count }
    }

    /// Notes that the connection of a `.firehose` for `key` became unwritable.
    func firehoseBecameUnwritable(forKey key: String) {
        self.firehoses.withLockedValue { $0[key, default: FirehoseRecord()].becameUnwritable += 1 }
    }

    func firehose(forKey key: String) -> FirehoseRecord {
        self.firehoses.withLockedValue { $0[key] ?? FirehoseRecord() }
    }

    /// Records an `.events` request for `key` with its `Last-Event-ID`; returns whether an earlier
    /// request already got the last event.
    func eventsRequested(forKey key: String, lastEventID: String?) -> Bool {
        self.events.withLockedValue { events in
            events[key, default: ([], false)].lastEventIDs.append(lastEventID)
            return events[key]?.lastEventSent ?? false
        }
    }

    /// Notes that the last event of `key` was written.
    func lastEventSent(forKey key: String) {
        self.events.withLockedValue { $0[key, default: ([], false)].lastEventSent = true }
    }

    func lastEventIDs(forKey key: String) -> [String?] {
        self.events.withLockedValue { $0[key]?.lastEventIDs ?? [] }
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
