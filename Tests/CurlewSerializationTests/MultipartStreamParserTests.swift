import CurlewSerialization
import Foundation
import Testing
@testable import CurlewTestServer

/// The test server's streaming multipart parser, fed Curlew's multipart bodies in every chunking:
/// what the transfer tests rely on when the server echoes the parts.
@Suite("Test server: streaming multipart parser")
struct MultipartStreamParserTests {
    /// Content that nearly contains the delimiter (CRLF `--B`), to exercise partial matches: it
    /// even ends with CRLF `--`, so the real delimiter starts right after a failed match.
    static var tricky: Data { Data("a\r\n--x\r\r\n-B\n\r\n-\r\r\n--".utf8) }

    static func form() throws -> (MultipartFormData, [(name: String, filename: String?, type: String?, content: Data)]) {
        var form = try MultipartFormData(boundary: "B")
        let parts: [(name: String, filename: String?, type: String?, content: Data)] = [
            ("title", nil, nil, Data("Holiday".utf8)),
            ("empty", nil, nil, Data()),
            ("tricky", "t.bin", "application/octet-stream", Self.tricky),
            ("photo", "p.png", "image/png", Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 * 31) })),
        ]
        for part in parts {
            try form.append(part.content, name: part.name, fileName: part.filename, mimeType: part.type)
        }
        return (form, parts)
    }

    @Test("every chunking gives the same parts", arguments: [1, 2, 3, 5, 7, 64, 1 << 20])
    func chunkings(_ chunkSize: Int) throws {
        let (form, expected) = try Self.form()
        let body = try MultipartFormDataTests.bytes(of: form.body)
        var parser = try #require(MultipartStreamParser(contentType: form.contentType, computesChecksums: true))
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + chunkSize)
            body[offset..<end].withUnsafeBytes { parser.consume($0) }
            offset = end
        }
        let parts = try parser.finish().get()
        #expect(parts.map(\.name) == expected.map(\.name))
        #expect(parts.map(\.filename) == expected.map(\.filename))
        #expect(parts.map(\.contentType) == expected.map(\.type))
        #expect(parts.map(\.size) == expected.map(\.content.count))
        #expect(parts.map(\.checksum.value) == expected.map { TestServer.checksum($0.content) })
    }

    @Test("a body without the closing boundary, or with garbage after one, is reported")
    func invalid() throws {
        var truncated = try #require(MultipartStreamParser(contentType: "multipart/form-data; boundary=B", computesChecksums: false))
        Data("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nxyz".utf8).withUnsafeBytes { truncated.consume($0) }
        #expect(throws: MultipartError.self) { try truncated.finish().get() }
        var garbage = try #require(MultipartStreamParser(contentType: "multipart/form-data; boundary=\"B\"", computesChecksums: false))
        Data("--Bxx".utf8).withUnsafeBytes { garbage.consume($0) }
        #expect(throws: MultipartError.self) { try garbage.finish().get() }
        #expect(MultipartStreamParser(contentType: "text/plain", computesChecksums: false) == nil)
        #expect(MultipartStreamParser(contentType: "multipart/form-data", computesChecksums: false) == nil)
    }
}
