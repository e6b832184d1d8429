/// The transfers' own deadlines (their total timeouts), earliest first: the engine's backstop for
/// what curl does not time out by itself.
///
/// libcurl checks a transfer's `CURLOPT_TIMEOUT` only while the transfer has a connection. One that
/// waits in curl's pending list — for a free connection under the per-host limit, or for a first
/// connection to tell whether it can multiplex (`CURLOPT_PIPEWAIT`) — is never timed out there, so
/// without a check of the engine's own it could wait far past its timeout. The engine keeps every
/// deadline here and completes, with ``TransferError/Code/timedOut``, a transfer still running
/// when its deadline passes.
///
/// A binary min-heap of `(deadline, transfer id)`. Entries are never removed early: a transfer that
/// finished, paused or moved its deadline simply no longer matches its entry, which the engine
/// skips when it comes due (and ``compact(keeping:)`` drops when they pile up).
struct DeadlineQueue {
    struct Entry: Hashable {
        var deadline: ContinuousClock.Instant
        var transferID: UInt64
    }

    private var heap: [Entry] = []

    /// The earliest deadline, if any.
    var earliest: ContinuousClock.Instant? { self.heap.first?.deadline }

    /// Entries held, current or stale.
    var count: Int { self.heap.count }

    /// Adds a deadline for a transfer.
    mutating func insert(_ deadline: ContinuousClock.Instant, for transferID: UInt64) {
        self.heap.append(Entry(deadline: deadline, transferID: transferID))
        self.siftUp(from: self.heap.count - 1)
    }

    /// Removes and returns the earliest entry if its deadline is at or before `now`.
    mutating func popDue(at now: ContinuousClock.Instant) -> Entry? {
        guard let first = self.heap.first, first.deadline <= now else { return nil }
        let last = self.heap.removeLast()
        if !self.heap.isEmpty {
            self.heap[0] = last
            self.siftDown(from: 0)
        }
        return first
    }

    /// Keeps only the entries for which `isCurrent` holds.
    mutating func compact(keeping isCurrent: (Entry) -> Bool) {
        self.heap = self.heap.filter(isCurrent)
        for index in stride(from: self.heap.count / 2 - 1, through: 0, by: -1) {
            self.siftDown(from: index)
        }
    }

    private mutating func siftUp(from start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard self.heap[child].deadline < self.heap[parent].deadline else { return }
            self.heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < self.heap.count else { return }
            let right = left + 1
            var smallest = left
            if right < self.heap.count, self.heap[right].deadline < self.heap[left].deadline { smallest = right }
            guard self.heap[smallest].deadline < self.heap[parent].deadline else { return }
            self.heap.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
