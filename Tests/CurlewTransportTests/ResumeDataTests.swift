import Foundation
import HTTPTypes
import Testing
@testable import CurlewTransport

/// When resume data applies to a request (a value, no I/O), and the sink that continues a partial
/// file (temporary files only).
@Suite("Resume data decisions")
struct ResumeDataDecisionTests {
    static let destination = URL(fileURLWithPath: "/downloads/big.iso")
    static let partial = URL(fileURLWithPath: "/downloads/.big.iso.curlew-12345.partial")

    static func data(partial: URL = Self.partial, kept: Int64 = 1000) throws -> ResumeData {
        let head = HTTPResponse(status: .ok, headerFields: [.eTag: "\"v1\"", .contentLength: "4000"])
        return ResumeData(url: try #require(URL(string: "https://example.com/big.iso")), destination: Self.destination,
                          partialFile: partial, bytesKept: kept, validator: try #require(ResumeValidator(head)),
                          responseHead: head)
    }

    static func request(_ url: String = "https://example.com/big.iso", method: HTTPRequest.Method = .get,
                        destination: ResponseDestination = .file(Self.destination)) throws -> TransferRequest {
        TransferRequest(url: try #require(URL(string: url)), method: method, destination: destination)
    }

    @Test("a GET of the same URL into the same file continues from the bytes kept")
    func applies() throws {
        let continuation = try #require(try Self.data().continuation(for: try Self.request()))
        #expect(continuation.partialPath == Self.partial.path)
        #expect(continuation.offset == 1000)
        #expect(continuation.validator == ResumeValidator(entityTag: "\"v1\"", lastModified: nil))
    }

    @Test("another URL, method, destination or a Range of the request's own: no continuation")
    func requestMismatch() throws {
        let data = try Self.data()
        #expect(data.continuation(for: try Self.request("https://example.com/other.iso")) == nil)
        #expect(data.continuation(for: try Self.request("https://other.example/big.iso")) == nil)
        #expect(data.continuation(for: try Self.request(method: .post)) == nil)
        #expect(data.continuation(for: try Self.request(destination: .memory)) == nil)
        #expect(data.continuation(for: try Self.request(destination: .file(URL(fileURLWithPath: "/downloads/b.iso")))) == nil)
        var ranged = try Self.request()
        ranged.head.headerFields[.range] = "bytes=0-9"
        #expect(data.continuation(for: ranged) == nil)
    }

    @Test("resume data read from disk names no file but the destination's own temporary one", arguments: [
        "/etc/passwd", "/downloads/big.iso", "/elsewhere/.big.iso.curlew-12345.partial", "/downloads/.big.iso.curlew-.partial",
        "/downloads/.big.iso.curlew-12a45.partial", "/downloads/.other.iso.curlew-12345.partial",
        "/downloads/.big.iso.curlew-12345.partial.old", "/downloads/sub/../../etc/.big.iso.curlew-1.partial",
    ])
    func foreignPartialFile(_ path: String) throws {
        let data = try Self.data(partial: URL(fileURLWithPath: path))
        #expect(!data.belongsToDestination)
        #expect(data.continuation(for: try Self.request()) == nil)
    }

    @Test("nothing kept, or a head whose validator is not the recorded one: no continuation")
    func dataMismatch() throws {
        #expect(try Self.data(kept: 0).continuation(for: try Self.request()) == nil)
        var changed = try Self.data()
        changed.entityTag = "\"v2\""
        #expect(changed.continuation(for: try Self.request()) == nil)
        var weak = try Self.data()
        weak.responseHead.headerFields[.eTag] = "W/\"v1\""
        weak.entityTag = "W/\"v1\""
        #expect(weak.continuation(for: try Self.request()) == nil)
    }

    @Test("a sink continuing a partial file cuts what is past the bytes kept and appends; a short file is refused")
    func continuingSink() throws {
        let directory = FileManager.default.temporaryDirectory
        let destination = directory.appendingPathComponent("curlew-sink-\(UUID().uuidString)")
        let partial = directory.appendingPathComponent(".\(destination.lastPathComponent).curlew-1.partial")
        defer {
            try? FileManager.default.removeItem(at: destination)
            try? FileManager.default.removeItem(at: partial)
        }
        try Data("abcdefXYZ".utf8).write(to: partial)
        #expect(throws: TransferError.self) {
            _ = try ResponseBodySink(continuing: partial.path, count: 10, destination: destination)
        }
        var sink = try ResponseBodySink(continuing: partial.path, count: 6, destination: destination)
        #expect(sink.count == 6)
        try Data("gh".utf8).withUnsafeBytes { bytes in _ = try sink.write(bytes) }
        let detached = sink.keepPartialFile()
        let kept = try #require(detached)
        #expect(kept.path == partial.path && kept.count == 8)
        #expect(try Data(contentsOf: partial) == Data("abcdefgh".utf8))
        var again = try ResponseBodySink(continuing: partial.path, count: 8, destination: destination)
        _ = try again.finish()
        #expect(try Data(contentsOf: destination) == Data("abcdefgh".utf8))
        #expect(!FileManager.default.fileExists(atPath: partial.path))
    }
}
