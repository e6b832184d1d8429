import NIOConcurrencyHelpers

/// The thread-safe record of a server's tagged requests (``TaggedRequest``): every event-loop thread
/// writes into it, any thread reads it. Untagged requests are not recorded, so the benchmarks' load
/// costs nothing here.
final class RequestJournal: Sendable {
    /// Where one tagged request's record is kept.
    struct Entry: Sendable {
        fileprivate let tag: String
        fileprivate let index: Int

        /// Whether this is the first request recorded with its tag.
        var isFirstOfItsTag: Bool { self.index == 0 }
    }

    private let records = NIOLockedValueBox<[String: [TaggedRequest]]>([:])

    /// Records a new request under `tag` and returns where its record is.
    func begin(tag: String, _ record: TaggedRequest) -> Entry {
        self.records.withLockedValue { records in
            records[tag, default: []].append(record)
            return Entry(tag: tag, index: records[tag, default: []].count - 1)
        }
    }

    /// Notes the status of the response head written for `entry`.
    func answered(_ entry: Entry, status: Int) {
        self.update(entry) { $0.status = status }
    }

    /// Notes how the response of `entry` ended; only the first ending counts.
    func ended(_ entry: Entry, _ outcome: TaggedRequest.Outcome) {
        self.update(entry) { record in
            if record.outcome == .answering { record.outcome = outcome }
        }
    }

    /// The records under `tag`, in the order the requests arrived.
    func requests(tagged tag: String) -> [TaggedRequest] {
        self.records.withLockedValue { $0[tag] ?? [] }
    }

    private func update(_ entry: Entry, _ change: (inout TaggedRequest) -> Void) {
        self.records.withLockedValue { records in
            guard var list = records[entry.tag], list.indices.contains(entry.index) else { return }
            change(&list[entry.index])
            records[entry.tag] = list
        }
    }
}
