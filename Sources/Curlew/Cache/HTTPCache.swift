import CurlewTransport
import Dispatch
import Foundation
import HTTPTypes

/// A private HTTP cache (RFC 9111): stored responses answer later GETs without a request while
/// they are fresh, and with a conditional request (`If-None-Match`, `If-Modified-Since`) answered
/// by a 304 when they are stale. Opt-in: curl has none, and a transfer never consults one unless
/// it runs through a ``CachingTransport`` — which a ``RequestOperationManager`` made with a cache
/// sets up itself.
///
/// ```swift
/// let api = RequestOperationManager(baseURL: baseURL, cache: HTTPCache())
/// let first = try await api.get("catalog", as: Catalog.self)    // from the server, stored
/// let again = try await api.get("catalog", as: Catalog.self)    // fresh: no request at all
/// ```
///
/// **What it stores.** Responses to GETs whose body goes to memory, with a status cacheable by
/// default (200, 203, 204, 404, 405, 410, 414, 501), that arrived without a redirect and say how
/// long they are fresh (`Cache-Control: max-age`, `Expires`) or how to revalidate them (`ETag`,
/// `Last-Modified`). Not: anything with `no-store` in the request or response, `Vary: *`, a
/// `Vary` on `Authorization`, `Proxy-Authorization` or `Cookie`, and — unless the response says
/// `public`, `s-maxage` or `must-revalidate` — responses to requests with credentials. A response
/// without explicit freshness is stored only to be revalidated: the cache computes no heuristic
/// lifetime. `Set-Cookie` is never stored. Each entry is found by its URL (scheme, host, port, path
/// and query), so no origin is ever answered with another's response, and by the request fields
/// its `Vary` names. A POST, PUT, PATCH, DELETE (any unsafe method) drops the entries of its URL.
/// Details: `Docs/Manager.md`.
///
/// **Bounds.** ``Limits`` caps the bytes and entries held (the least recently used go first) and
/// the size of one response. The cache lives in memory, or in a directory
/// (``init(directory:limits:now:)``) whose entries survive the process; a damaged or foreign
/// entry file is a miss, never a crash.
///
/// The cache is private: it belongs to one user of one client. Share it only between managers or
/// transports acting for the same user.
public final class HTTPCache: Sendable {
    /// How much a cache holds.
    public struct Limits: Sendable, Hashable {
        /// The most bytes held: bodies plus header fields. 32 MiB by default.
        public var maximumBytes: Int
        /// The most responses held. 1,000 by default.
        public var maximumEntries: Int
        /// The largest body stored; larger responses pass through unstored. 4 MiB by default.
        public var maximumEntrySize: Int

        /// Creates limits.
        public init(maximumBytes: Int = 32 << 20, maximumEntries: Int = 1_000, maximumEntrySize: Int = 4 << 20) {
            self.maximumBytes = maximumBytes
            self.maximumEntries = maximumEntries
            self.maximumEntrySize = maximumEntrySize
        }
    }

    /// What the cache may hold.
    public let limits: Limits
    /// The directory holding the entries, or `nil` for a cache in memory.
    public var directory: URL? { self.files?.url }
    /// The clock freshness is measured with.
    let now: @Sendable () -> Date
    /// Where every lookup, store and file access runs, one after the other: a response stored before
    /// a later request's lookup is always found by it.
    let queue = DispatchQueue(label: "curlew.http-cache")
    private let state: Locked<State>
    private let files: CacheDirectory?

    private struct State: Sendable {
        var index: CacheIndex
        /// The bodies of a cache in memory, by entry id.
        var bodies: [UInt64: Data] = [:]
    }

    /// What a lookup found, with the stored body loaded.
    enum Lookup: Sendable {
        case bypass
        case miss
        case fresh(CachedResponse, body: Data, age: Int)
        case revalidate(CachedResponse, body: Data, conditions: HTTPFields)
        case unsatisfiable
    }

    /// Creates an empty cache in memory.
    ///
    /// - Parameters:
    ///   - limits: How much it holds.
    ///   - now: The clock freshness is measured with; the system's by default.
    public init(limits: Limits = Limits(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.limits = limits
        self.now = now
        self.files = nil
        self.state = Locked(State(index: CacheIndex(maximumBytes: limits.maximumBytes, maximumEntries: limits.maximumEntries)))
    }

    /// Creates a cache whose entries live in `directory`, one file each, and holds the entries
    /// already there: those a cache on the same directory stored earlier, in this process or another.
    ///
    /// Files are written atomically and readable by their owner only. Entry files beyond the limits
    /// (the oldest first), damaged ones and leftovers of interrupted writes are removed here; other
    /// files in the directory are left alone. Use one cache per directory at a time.
    ///
    /// - Parameters:
    ///   - directory: A `file:` URL; created (mode `0700`) when missing.
    ///   - limits: How much it holds.
    ///   - now: The clock freshness is measured with; the system's by default.
    /// - Throws: `TransferError` with `TransferError/Code/cannotWriteToFile` when the directory
    ///   cannot be created.
    public init(directory: URL, limits: Limits = Limits(), now: @escaping @Sendable () -> Date = { Date() }) throws(TransferError) {
        let files = try CacheDirectory(url: directory)
        self.limits = limits
        self.now = now
        self.files = files
        var index = CacheIndex(maximumBytes: limits.maximumBytes, maximumEntries: limits.maximumEntries)
        for record in files.loadRecords(maximumEntries: limits.maximumEntries) {
            guard record.entry.bodyLength <= limits.maximumEntrySize else {
                files.remove(record.id)
                continue
            }
            for removed in index.insert(record) { files.remove(removed.id) }
        }
        self.state = Locked(State(index: index))
    }

    /// How many responses the cache holds.
    public var count: Int {
        self.state.withLock { $0.index.count }
    }

    /// The bytes the cache holds (bodies and header fields).
    public var totalBytes: Int {
        self.state.withLock { $0.index.totalBytes }
    }

    /// Waits until every response handed to the cache so far is stored (written to its file, for a
    /// cache in a directory) and every removal done: call it before a process that must keep its
    /// cache exits.
    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            self.queue.async { continuation.resume() }
        }
    }

    /// Removes every stored response.
    public func removeAll() {
        self.queue.async {
            let removed = self.state.withLock { state in
                state.bodies = [:]
                return state.index.removeAll()
            }
            self.removeFiles(of: removed)
        }
    }

    /// Removes the responses stored for `url`.
    public func removeResponses(for url: URL) {
        guard let key = CacheKey.key(for: url) else { return }
        self.invalidate([key])
    }

    // MARK: On the queue

    /// What the cache holds for `request` at `now`, the body loaded; call on ``queue``. An entry whose
    /// body cannot be read any more is dropped, and the decision taken again without it.
    func lookUp(_ request: TransferRequest, now: Date) -> Lookup {
        guard let key = CacheKey.key(for: request.head) else { return .bypass }
        var records = self.state.withLock { $0.index.records(forKey: key) }
        while true {
            switch CacheLookup.decide(request, candidates: records.map(\.entry), now: now) {
            case .bypass: return .bypass
            case .miss: return .miss
            case .unsatisfiable: return .unsatisfiable
            case .fresh(let index, let age):
                let record = records[index]
                if let body = self.body(of: record) { return .fresh(record.entry, body: body, age: age) }
                records.remove(at: index)
            case .revalidate(let index, let conditions):
                let record = records[index]
                if let body = self.body(of: record) { return .revalidate(record.entry, body: body, conditions: conditions) }
                records.remove(at: index)
            }
        }
    }

    /// The body of `record`, marking it used; `nil` (and the record dropped) when it is gone.
    private func body(of record: CacheIndex.Record) -> Data? {
        if let files = self.files {
            guard let body = files.body(of: record) else {
                self.state.withLock { _ = $0.index.remove(id: record.id) }
                return nil
            }
            self.state.withLock { $0.index.touch(record.id) }
            return body
        }
        return self.state.withLock { state in
            guard let body = state.bodies[record.id] else {
                _ = state.index.remove(id: record.id)
                return nil
            }
            state.index.touch(record.id)
            return body
        }
    }

    // MARK: Changes, queued

    /// Stores `entry` with `body`, replacing what it replaces (``CacheIndex/insert(_:)``), unless
    /// the body is larger than ``Limits/maximumEntrySize``.
    func store(_ entry: CachedResponse, body: Data) {
        guard body.count <= self.limits.maximumEntrySize else { return }
        self.queue.async {
            let id = self.state.withLock { state in
                var id = UInt64.random(in: 1 ... .max)
                while state.index.contains(id) { id = UInt64.random(in: 1 ... .max) }
                return id
            }
            let record = CacheIndex.Record(id: id, entry: entry)
            if let files = self.files, !files.write(record, body: body) { return }
            let removed = self.state.withLock { state in
                if self.files == nil { state.bodies[id] = body }
                let removed = state.index.insert(record)
                for old in removed { state.bodies[old.id] = nil }
                return removed
            }
            self.removeFiles(of: removed)
        }
    }

    /// Drops the entries stored under `keys`.
    func invalidate(_ keys: [String]) {
        guard !keys.isEmpty else { return }
        self.queue.async {
            let removed = self.state.withLock { state in
                let removed = keys.flatMap { state.index.remove(key: $0) }
                for old in removed { state.bodies[old.id] = nil }
                return removed
            }
            self.removeFiles(of: removed)
        }
    }

    private func removeFiles(of records: [CacheIndex.Record]) {
        guard let files = self.files else { return }
        for record in records { files.remove(record.id) }
    }
}
