/// The bookkeeping of an ``HTTPCache``: the entries it holds under each key, their bytes, their
/// order of use, and which go when a limit is crossed (least recently used first). No I/O: the
/// cache stores bodies (in memory or in files) by the ids it hands out.
struct CacheIndex {
    /// One stored entry.
    struct Record: Hashable {
        /// Unique within the cache; names the entry's body (and file).
        var id: UInt64
        var entry: CachedResponse
    }

    private struct Node {
        var record: Record
        var older: UInt64?
        var newer: UInt64?
    }

    /// The most bytes (``CachedResponse/size``) and entries held.
    let maximumBytes: Int
    let maximumEntries: Int
    private var nodes: [UInt64: Node] = [:]
    private var idsByKey: [String: [UInt64]] = [:]
    /// The least recently used entry, the first to go.
    private var oldest: UInt64?
    private var newest: UInt64?
    /// The sum of the entries' sizes.
    private(set) var totalBytes = 0

    init(maximumBytes: Int, maximumEntries: Int) {
        self.maximumBytes = maximumBytes
        self.maximumEntries = maximumEntries
    }

    /// How many entries are held.
    var count: Int { self.nodes.count }

    /// Whether `id` is held.
    func contains(_ id: UInt64) -> Bool {
        self.nodes[id] != nil
    }

    /// The entries stored under `key`, oldest stored first.
    func records(forKey key: String) -> [Record] {
        (self.idsByKey[key] ?? []).compactMap { self.nodes[$0]?.record }
    }

    /// Marks `id` as just used.
    mutating func touch(_ id: UInt64) {
        guard self.nodes[id] != nil, self.newest != id else { return }
        self.unlink(id)
        self.linkAsNewest(id)
    }

    /// Adds `record` as the most recently used entry, replacing those of its key that answer the
    /// same requests (same varying fields and body form), then removes the least recently used
    /// entries while a limit is exceeded. A record that alone exceeds the byte limit is not added.
    ///
    /// - Returns: The records removed (replaced or evicted) — or `record` itself when not added —
    ///   whose bodies the cache must now drop.
    mutating func insert(_ record: Record) -> [Record] {
        let size = record.entry.size
        guard size <= self.maximumBytes, self.maximumEntries > 0, self.nodes[record.id] == nil else { return [record] }
        var removed = self.records(forKey: record.entry.key).filter {
            $0.entry.varying == record.entry.varying && $0.entry.bodyCoding == record.entry.bodyCoding
        }
        for old in removed { self.remove(id: old.id) }
        self.nodes[record.id] = Node(record: record)
        self.idsByKey[record.entry.key, default: []].append(record.id)
        self.totalBytes += size
        self.linkAsNewest(record.id)
        while self.totalBytes > self.maximumBytes || self.nodes.count > self.maximumEntries, let victim = self.oldest {
            if let evicted = self.remove(id: victim) { removed.append(evicted) }
        }
        return removed
    }

    /// Removes every entry stored under `key`.
    mutating func remove(key: String) -> [Record] {
        (self.idsByKey[key] ?? []).compactMap { self.remove(id: $0) }
    }

    /// Removes one entry.
    @discardableResult
    mutating func remove(id: UInt64) -> Record? {
        guard let node = self.nodes[id] else { return nil }
        self.unlink(id)
        self.nodes[id] = nil
        let key = node.record.entry.key
        self.idsByKey[key]?.removeAll { $0 == id }
        if self.idsByKey[key]?.isEmpty == true { self.idsByKey[key] = nil }
        self.totalBytes -= node.record.entry.size
        return node.record
    }

    /// Removes every entry.
    mutating func removeAll() -> [Record] {
        let all = self.nodes.values.map(\.record)
        self = CacheIndex(maximumBytes: self.maximumBytes, maximumEntries: self.maximumEntries)
        return all
    }

    private mutating func unlink(_ id: UInt64) {
        guard let node = self.nodes[id] else { return }
        if let older = node.older { self.nodes[older]?.newer = node.newer } else { self.oldest = node.newer }
        if let newer = node.newer { self.nodes[newer]?.older = node.older } else { self.newest = node.older }
        self.nodes[id]?.older = nil
        self.nodes[id]?.newer = nil
    }

    private mutating func linkAsNewest(_ id: UInt64) {
        self.nodes[id]?.older = self.newest
        self.nodes[id]?.newer = nil
        if let newest = self.newest { self.nodes[newest]?.newer = id } else { self.oldest = id }
        self.newest = id
    }
}
