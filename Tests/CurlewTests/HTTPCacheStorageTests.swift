import Foundation
import HTTPTypes
import Testing
@testable import Curlew

/// Where the cache keeps entries: the index's limits and order of eviction (a value, no I/O), and
/// the directory's files — written atomically, private, read back by another cache, and a damaged
/// file is a miss, never a crash. No network.
@Suite("HTTP cache storage")
struct HTTPCacheStorageTests {
    static func entry(_ key: String, body: Int = 100, accept: String? = nil) -> CachedResponse {
        CachedResponse(key: key, url: URL(fileURLWithPath: "/"), head: HTTPResponse(status: .ok, headerFields: [.eTag: "\"e\""]),
                       requestTime: HTTPCachePolicyTests.t0, responseTime: HTTPCachePolicyTests.t0,
                       varying: accept.map { [.init(name: "accept", value: $0)] } ?? [], bodyCoding: .identity, bodyLength: body)
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("curlew-cache-\(UUID().uuidString)")
    }

    // MARK: Index

    @Test("the least recently used entry goes first when the entry limit is crossed")
    func evictsByCount() {
        var index = CacheIndex(maximumBytes: 1 << 20, maximumEntries: 2)
        #expect(index.insert(.init(id: 1, entry: Self.entry("a"))).isEmpty)
        #expect(index.insert(.init(id: 2, entry: Self.entry("b"))).isEmpty)
        index.touch(1)
        #expect(index.insert(.init(id: 3, entry: Self.entry("c"))).map(\.id) == [2])
        #expect(index.count == 2 && index.contains(1) && index.contains(3))
        #expect(index.insert(.init(id: 4, entry: Self.entry("d"))).map(\.id) == [1])
    }

    @Test("the byte limit evicts as many as needed; an entry larger than the limit is not added")
    func evictsByBytes() {
        let size = Self.entry("k1").size
        var index = CacheIndex(maximumBytes: size * 3, maximumEntries: 100)
        for id in UInt64(1)...3 { _ = index.insert(.init(id: id, entry: Self.entry("k\(id)"))) }
        #expect(index.totalBytes == 3 * size)
        let big = Self.entry("k9", body: 100 + size)  // the size of two entries
        #expect(big.size == 2 * size)
        #expect(index.insert(.init(id: 9, entry: big)).map(\.id) == [1, 2])
        #expect(index.totalBytes == size + big.size)
        let huge = Self.entry("k0", body: size * 4)
        #expect(index.insert(.init(id: 10, entry: huge)).map(\.id) == [10])
        #expect(!index.contains(10) && index.contains(9))
    }

    @Test("a new response replaces the entry for the same request, not other variants")
    func replacesSameVariant() {
        var index = CacheIndex(maximumBytes: 1 << 20, maximumEntries: 10)
        _ = index.insert(.init(id: 1, entry: Self.entry("k", accept: "json")))
        _ = index.insert(.init(id: 2, entry: Self.entry("k", accept: "xml")))
        #expect(index.insert(.init(id: 3, entry: Self.entry("k", accept: "json"))).map(\.id) == [1])
        #expect(index.records(forKey: "k").map(\.id) == [2, 3])
        #expect(index.remove(key: "k").map(\.id).sorted() == [2, 3])
        #expect(index.count == 0 && index.totalBytes == 0)
    }

    // MARK: Directory

    @Test("entries written to a directory are read back by another cache on it; files are private")
    func directoryRoundTrip() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try CacheDirectory(url: directory)
        let record = CacheIndex.Record(id: 0xABC, entry: Self.entry("https://example.com/a", body: 5))
        #expect(files.write(record, body: Data("hello".utf8)))
        let name = CacheDirectory.name(0xABC, suffix: ".entry")
        #expect(name == "0000000000000abc.entry")
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let directoryAttributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((directoryAttributes[.posixPermissions] as? Int) == 0o700)

        let reopened = try CacheDirectory(url: directory)
        let records = reopened.loadRecords(maximumEntries: 10)
        #expect(records == [record])
        #expect(reopened.body(of: record) == Data("hello".utf8))
    }

    @Test("a damaged entry file is a miss and is removed; other files are left alone")
    func damagedFiles() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try CacheDirectory(url: directory)
        let good = CacheIndex.Record(id: 1, entry: Self.entry("https://example.com/good", body: 4))
        #expect(files.write(good, body: Data("good".utf8)))
        var damaged: [UInt64] = []
        // Truncated, the wrong magic, a metadata length past the file, metadata that is not JSON,
        // a body length that does not match the file, and nothing at all.
        let valid = try Data(contentsOf: directory.appendingPathComponent(CacheDirectory.name(1, suffix: ".entry")))
        var wrongMagic = valid
        wrongMagic[0] = UInt8(ascii: "X")
        var hugeLength = valid
        hugeLength.replaceSubrange(8..<12, with: [0x7F, 0xFF, 0xFF, 0xFF])
        var notJSON = valid
        notJSON[12] = UInt8(ascii: "!")
        for (offset, contents) in [valid.prefix(valid.count - 1), wrongMagic, hugeLength, notJSON, valid + Data("x".utf8), Data()]
            .enumerated() {
            let id = UInt64(100 + offset)
            try contents.write(to: directory.appendingPathComponent(CacheDirectory.name(id, suffix: ".entry")))
            damaged.append(id)
        }
        try Data("mine".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        try Data("half".utf8).write(to: directory.appendingPathComponent(CacheDirectory.name(7, suffix: ".tmp")))

        let records = try CacheDirectory(url: directory).loadRecords(maximumEntries: 100)
        #expect(records.map(\.id) == [1])
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == [CacheDirectory.name(1, suffix: ".entry"), "notes.txt"])

        // A file damaged after it was indexed: its body is a miss, and the file goes.
        try Data("garbage".utf8).write(to: directory.appendingPathComponent(CacheDirectory.name(1, suffix: ".entry")))
        #expect(files.body(of: good) == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(CacheDirectory.name(1, suffix: ".entry")).path))
    }

    @Test("a directory holding more entries than the limit keeps the newest")
    func directoryLimit() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try CacheDirectory(url: directory)
        for id in UInt64(1)...5 {
            #expect(files.write(.init(id: id, entry: Self.entry("https://example.com/\(id)", body: 1)), body: Data("x".utf8)))
            // Distinct modification times, oldest first, without waiting.
            let path = directory.appendingPathComponent(CacheDirectory.name(id, suffix: ".entry")).path
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: TimeInterval(id * 1000))],
                                                  ofItemAtPath: path)
        }
        #expect(files.loadRecords(maximumEntries: 2).map(\.id) == [4, 5])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 2)
    }

    @Test("a cache on a directory holds what an earlier cache there stored, within its limits")
    func cacheReopens() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try HTTPCache(directory: directory)
        first.store(Self.entry("https://example.com/a", body: 3), body: Data("abc".utf8))
        first.store(Self.entry("https://example.com/b", body: 3), body: Data("def".utf8))
        await first.flush()
        #expect(first.count == 2)
        let second = try HTTPCache(directory: directory)
        #expect(second.count == 2)
        let small = try HTTPCache(directory: directory, limits: .init(maximumEntries: 1))
        #expect(small.count == 1)
        small.removeAll()
        await small.flush()
        #expect(small.count == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("a path that is a file cannot be a cache directory")
    func notADirectory() throws {
        let file = Self.temporaryDirectory()
        try Data().write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: TransferError.self) { try HTTPCache(directory: file) }
    }
}
