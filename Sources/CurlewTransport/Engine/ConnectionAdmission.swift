/// Which transfers curl is given now, and which wait their turn in the engine, per host.
///
/// curl enforces `CURLMOPT_MAX_HOST_CONNECTIONS` by parking the transfers beyond it in its own
/// pending list, which libcurl 7.88 walks again on every connection change: with 10,000 transfers
/// to one host and 16 connections, that walk is most of the work (throughput fell to a sixth of
/// what 64 in flight reach). So the engine keeps the waiting ones itself, first come first
/// served, and hands curl a transfer only when its host has a free slot; curl's own limit stays
/// as the backstop.
///
/// A slot is held from the moment a transfer is handed to curl until its handle leaves the multi
/// handle for good (it finishes, fails, is cancelled or paused); a redirect or a resume of the same
/// transfer keeps it. Used on the engine's context only; no I/O, tested on its own.
struct ConnectionAdmission {
    /// Where slots are counted: the scheme and authority of a transfer's first attempt.
    ///
    /// Hashed once, when made: the engine looks a host up twice per transfer, and hashing its two
    /// strings each time measured some 600 instructions per lookup.
    struct Host: Hashable {
        let scheme: String
        let authority: String
        private let hash: Int

        init(scheme: String, authority: String) {
            self.scheme = scheme
            self.authority = authority
            var hasher = Hasher()
            hasher.combine(scheme)
            hasher.combine(authority)
            self.hash = hasher.finalize()
        }

        static func == (lhs: Host, rhs: Host) -> Bool {
            lhs.hash == rhs.hash && lhs.scheme == rhs.scheme && lhs.authority == rhs.authority
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(self.hash)
        }
    }

    /// One host's slots and queue; a host with neither has no entry.
    private struct HostState {
        /// Slots held.
        var held = 0
        /// The transfers waiting, oldest first, withdrawn ones still in place.
        var ids = FIFO()
        /// How many of `ids` still wait.
        var waiting = 0

        var isUnused: Bool { self.held == 0 && self.waiting == 0 }
    }

    /// What ``request(_:for:limit:)`` decided.
    enum Decision: Equatable {
        /// The transfer holds a slot: hand it to curl now.
        case admitted
        /// The transfer waits; ``release(_:)`` names it when its turn comes.
        case waiting
    }

    private var hosts: [Host: HostState] = [:]
    /// The host each waiting transfer waits for: a transfer not here is not waiting.
    private var waitingFor: [UInt64: Host] = [:]

    /// Transfers waiting for a slot.
    var waitingCount: Int { self.waitingFor.count }

    /// Slots held for `host`.
    func heldSlots(for host: Host) -> Int { self.hosts[host]?.held ?? 0 }

    /// Asks for a slot for transfer `id` on `host`, where at most `limit` may be held (`nil`: no
    /// limit). A transfer is admitted only when nobody is waiting for the host before it.
    mutating func request(_ id: UInt64, for host: Host, limit: Int?) -> Decision {
        let admitted = Self.admit(id, limit: limit, &self.hosts[host, default: HostState()])
        if !admitted { self.waitingFor[id] = host }
        return admitted ? .admitted : .waiting
    }

    private static func admit(_ id: UInt64, limit: Int?, _ state: inout HostState) -> Bool {
        if let limit, state.held >= limit || state.waiting > 0 {
            state.ids.append(id)
            state.waiting += 1
            return false
        }
        state.held += 1
        return true
    }

    /// Gives back a slot on `host`. Returns the waiting transfer that now holds it, or `nil` when
    /// the slot is free: nobody waits, or the first in the queue may not have it because `limit`
    /// (the most slots that transfer may have held, as ``request(_:for:limit:)`` takes it; `nil`:
    /// no limit) is below what is held now. A limit lower than when the slots were taken (the host
    /// turned out to answer one request per connection, see ``HostProtocols``) thus lets the held
    /// slots drain down to it before anyone waiting gets one.
    mutating func release(_ host: Host, limit: (UInt64) -> Int?) -> UInt64? {
        Self.release(&self.hosts[host], waitingFor: &self.waitingFor, limit: limit)
    }

    private static func release(_ entry: inout HostState?, waitingFor: inout [UInt64: Host],
                                limit: (UInt64) -> Int?) -> UInt64? {
        guard var state = entry.take() else { return nil }  // taken out, so its queue is not copied
        defer { entry = state.isUnused ? nil : state }
        while state.waiting > 0, let id = state.ids.first {
            guard waitingFor[id] != nil else {  // withdrawn
                _ = state.ids.popFirst()
                continue
            }
            if let most = limit(id), state.held > most { break }
            _ = state.ids.popFirst()
            waitingFor.removeValue(forKey: id)
            state.waiting -= 1
            return id
        }
        state.held -= 1
        return nil
    }

    /// Takes a waiting transfer out of its queue (cancelled, paused or timed out while waiting).
    /// Returns whether it was waiting.
    @discardableResult
    mutating func withdraw(_ id: UInt64) -> Bool {
        guard let host = self.waitingFor.removeValue(forKey: id) else { return false }
        Self.withdrawOne(&self.hosts[host])  // its ID stays in the queue and is skipped when reached
        return true
    }

    private static func withdrawOne(_ entry: inout HostState?) {
        guard var state = entry.take() else { return }
        state.waiting -= 1
        if state.waiting == 0 { state.ids = FIFO() }
        entry = state.isUnused ? nil : state
    }
}

extension ConnectionAdmission {
    /// A first-in, first-out queue of transfer IDs: an array read from a moving head, compacted
    /// when the consumed part is at least half of it.
    struct FIFO {
        private var items: [UInt64] = []
        private var head = 0

        mutating func append(_ id: UInt64) {
            self.items.append(id)
        }

        /// The oldest ID, left in place.
        var first: UInt64? {
            self.head < self.items.count ? self.items[self.head] : nil
        }

        mutating func popFirst() -> UInt64? {
            guard self.head < self.items.count else { return nil }
            let id = self.items[self.head]
            self.head += 1
            if self.head == self.items.count {
                self.items.removeAll(keepingCapacity: true)
                self.head = 0
            } else if self.head >= 1024 && self.head * 2 >= self.items.count {
                self.items.removeFirst(self.head)
                self.head = 0
            }
            return id
        }
    }
}
