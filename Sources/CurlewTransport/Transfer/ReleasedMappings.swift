/// Which released body mappings ``PageBuffer`` keeps for the next large body, and which it gives
/// back to the kernel: the policy alone, a value without I/O (the pages are mapped and unmapped by
/// the caller).
///
/// **Why keep any.** A fresh anonymous mapping costs its page faults and the zeroing of every page,
/// and unmapping it costs a TLB shoot-down on every CPU that ran the process. When the body is
/// released on another thread than the one that fills the next — the operation path, where the
/// application's handler or the operation's queues drop the body while the network context already
/// writes the next one — both meet: 16 MiB GETs one at a time through `RequestOperation` spent
/// 7.8 ms of CPU per body with fresh mappings and 4.8 ms reusing them (the engine alone 4.4 ms).
///
/// **When.** A mapping is kept only when it is the last live one: released while no other body
/// mapping is in use. Keeping one while another is live would hold two bodies' pages where one
/// suffices — with a handler that starts the next GET while it still holds the last body, every
/// later pair of bodies would alternate between two kept mappings and double the peak memory of
/// sequential large GETs. So the memory kept never adds to what the live bodies needed at their peak.
///
/// **How much.** At most ``maximumCount`` mappings of at most ``maximumBytes`` together; a larger
/// one is never kept. When a release goes over either bound the oldest kept mappings go first. A
/// kept mapping's pages are marked free-on-pressure by the caller (`MADV_FREE`), so they stay
/// resident only while the system has memory to spare.
struct ReleasedMappings {
    /// One mapping: its address and its size in bytes.
    struct Mapping: Equatable {
        var address: UInt
        var size: Int
    }

    /// The most mappings kept at once.
    let maximumCount: Int
    /// The most bytes kept at once (the sum of the sizes).
    let maximumBytes: Int
    /// Kept mappings, oldest first.
    private(set) var kept: [Mapping] = []
    /// The sum of the kept mappings' sizes.
    private(set) var keptBytes = 0
    /// Mappings in use: taken from here or mapped fresh, and not released yet.
    private(set) var liveCount = 0

    init(maximumCount: Int = 4, maximumBytes: Int = 64 << 20) {
        self.maximumCount = maximumCount
        self.maximumBytes = maximumBytes
    }

    /// Takes the smallest kept mapping of at least `size` bytes (no more than twice that, so a
    /// small body does not pin a large mapping), now live; or `nil`: then the caller maps fresh
    /// pages and says so with ``noteFreshMapping()``.
    mutating func take(atLeast size: Int) -> Mapping? {
        let kept = self.kept
        let fitting = kept.indices.lazy.filter { kept[$0].size >= size && kept[$0].size / 2 <= size }
        guard let best = fitting.min(by: { kept[$0].size < kept[$1].size }) else { return nil }
        let mapping = self.kept.remove(at: best)
        self.keptBytes -= mapping.size
        self.liveCount += 1
        return mapping
    }

    /// Counts a mapping the caller made fresh as live.
    mutating func noteFreshMapping() {
        self.liveCount += 1
    }

    /// A live mapping is released: kept if it was the last live one and the bounds allow it.
    /// Returns what the caller must unmap now: `mapping` itself when it is not kept, or the oldest
    /// kept ones it displaced.
    mutating func release(_ mapping: Mapping) -> [Mapping] {
        self.liveCount = max(self.liveCount - 1, 0)
        guard self.liveCount == 0, mapping.size <= self.maximumBytes, self.maximumCount > 0 else { return [mapping] }
        self.kept.append(mapping)
        self.keptBytes += mapping.size
        var displaced: [Mapping] = []
        while self.kept.count > self.maximumCount || self.keptBytes > self.maximumBytes {
            let oldest = self.kept.removeFirst()
            self.keptBytes -= oldest.size
            displaced.append(oldest)
        }
        return displaced
    }
}
