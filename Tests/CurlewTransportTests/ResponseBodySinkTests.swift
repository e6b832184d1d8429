import Foundation
import Testing
@testable import CurlewTransport

/// Memory bodies: small ones in `Data`, large ones in pages of their own, byte for byte the same.
@Suite("Response body sink")
struct ResponseBodySinkTests {
    /// `count` bytes of a pattern that shows a lost, doubled or shifted chunk.
    private func pattern(_ count: Int, from start: Int = 0) -> [UInt8] {
        (start..<(start + count)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    }

    private func write(_ bytes: [UInt8], to sink: inout ResponseBodySink, chunk: Int) throws {
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            try bytes[offset..<end].withUnsafeBytes { _ = try sink.write($0) }
            offset = end
        }
    }

    @Test("a body that grows past the mapping threshold in small chunks arrives whole")
    func growsIntoPages() throws {
        let bytes = self.pattern(3 * ResponseBodySink.mappingThreshold + 12_345)
        var sink = try ResponseBodySink(.memory)
        try self.write(bytes, to: &sink, chunk: 16_384)
        #expect(sink.count == Int64(bytes.count))
        let body = try #require(try sink.finish().body)
        #expect(body == Data(bytes))
    }

    @Test("a large Content-Length maps once; a body below the threshold stays in Data", arguments: [100, 5_000_000])
    func reserved(_ length: Int) throws {
        let bytes = self.pattern(length)
        var sink = try ResponseBodySink(.memory)
        sink.reserve(Int64(length))
        try self.write(bytes, to: &sink, chunk: 65_536)
        let body = try #require(try sink.finish().body)
        #expect(body == Data(bytes))
    }

    @Test("a body longer than its Content-Length said still arrives whole")
    func longerThanReserved() throws {
        let bytes = self.pattern(2 * ResponseBodySink.mappingThreshold + 7)
        var sink = try ResponseBodySink(.memory)
        sink.reserve(Int64(ResponseBodySink.mappingThreshold))
        try self.write(bytes, to: &sink, chunk: 100_000)
        #expect(try sink.finish().body == Data(bytes))
    }

    @Test("truncating a mapped body starts it over")
    func truncateMapped() throws {
        var sink = try ResponseBodySink(.memory)
        try self.write(self.pattern(2 * ResponseBodySink.mappingThreshold), to: &sink, chunk: 65_536)
        try sink.truncate()
        let again = self.pattern(1000, from: 7)
        try self.write(again, to: &sink, chunk: 300)
        #expect(try sink.finish().body == Data(again))
    }

    @Test("the handed-over Data outlives the sink and can be changed like any Data")
    func handedOverOutlivesSink() throws {
        let bytes = self.pattern(ResponseBodySink.mappingThreshold + 1)
        var body: Data
        do {
            var sink = try ResponseBodySink(.memory)
            try self.write(bytes, to: &sink, chunk: 4096)
            body = try #require(try sink.finish().body)
        }
        body.append(contentsOf: [1, 2, 3])
        #expect(body == Data(bytes + [1, 2, 3]))
    }

    @Test("a body written into pages an earlier body released shows only its own bytes")
    func reusedPagesShowOnlyTheNewBody() throws {
        let first = self.pattern(5_000_000)
        do {
            var sink = try ResponseBodySink(.memory)
            sink.reserve(Int64(first.count))
            try self.write(first, to: &sink, chunk: 65_536)
            #expect(try sink.finish().body == Data(first))
        }  // the first body's pages are released here, and kept
        let second = self.pattern(4_500_000, from: 99)
        var sink = try ResponseBodySink(.memory)
        sink.reserve(Int64(second.count))
        try self.write(second, to: &sink, chunk: 10_000)
        let body = try #require(try sink.finish().body)
        #expect(body.count == second.count)
        #expect(body == Data(second))
    }

    // MARK: Files

    /// A new empty directory, removed by `body`'s caller.
    private func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    @Test("a file sink replaces the destination when finished to replace it, leaving nothing else")
    func fileReplaces() throws {
        try self.withDirectory { directory in
            let destination = directory.appendingPathComponent("body.bin")
            try Data("old".utf8).write(to: destination)
            var sink = try ResponseBodySink(.file(destination))
            try self.write(self.pattern(100_000), to: &sink, chunk: 16_384)
            let stored = try sink.finish(replacingFile: true)
            #expect(stored.fileURL == destination && stored.body == nil)
            #expect(try Data(contentsOf: destination) == Data(self.pattern(100_000)))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["body.bin"])
        }
    }

    @Test("a file sink finished without replacing leaves the destination, keeps the first 64 KiB, removes its file",
          arguments: [10, 100_000])
    func fileKept(_ length: Int) throws {
        try self.withDirectory { directory in
            let destination = directory.appendingPathComponent("body.bin")
            try Data("old".utf8).write(to: destination)
            var sink = try ResponseBodySink(.file(destination))
            try self.write(self.pattern(length), to: &sink, chunk: 16_384)
            let stored = try sink.finish(replacingFile: false)
            #expect(stored.fileURL == nil)
            #expect(stored.body == Data(self.pattern(min(length, ResponseDestination.retainedErrorBodySize))))
            #expect(try Data(contentsOf: destination) == Data("old".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["body.bin"])
        }
    }

    @Test("a discarded file sink leaves the destination as it was and no file of its own")
    func fileDiscarded() throws {
        try self.withDirectory { directory in
            let destination = directory.appendingPathComponent("body.bin")
            var sink = try ResponseBodySink(.file(destination))
            try self.write(self.pattern(1000), to: &sink, chunk: 100)
            sink.discard()
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }
}
