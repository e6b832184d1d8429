import CurlewSerialization
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// Multipart forms without I/O (a temporary file aside): framing, names, types, length, errors.
@Suite("Multipart form data")
struct MultipartFormDataTests {
    /// The body's bytes, reading file regions the way the transfer will.
    static func bytes(of body: RequestBody) throws -> Data {
        guard case .parts(let parts) = body else { throw CocoaError(.featureUnsupported) }
        var result = Data()
        for part in parts {
            switch part {
            case .data(let data):
                result.append(data)
            case .file(let region):
                let handle = try FileHandle(forReadingFrom: region.url)
                defer { try? handle.close() }
                try handle.seek(toOffset: UInt64(region.offset))
                result.append(try handle.read(upToCount: Int(region.length)) ?? Data())
            }
        }
        return result
    }

    @Test("the framing is exactly RFC 2046's, and Content-Length matches the bytes")
    func framing() throws {
        var form = try MultipartFormData(boundary: "B0undary")
        try form.append(Data("Holiday".utf8), name: "title")
        try form.append(Data([0, 1, 2]), name: "blob", fileName: "raw.bin")
        try form.append(Data("{}".utf8), name: "meta", fileName: "m", mimeType: "application/json")
        let body = try Self.bytes(of: form.body)
        let expected = "--B0undary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
            + "--B0undary\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"raw.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n\u{0}\u{1}\u{2}\r\n"
            + "--B0undary\r\nContent-Disposition: form-data; name=\"meta\"; filename=\"m\"\r\n"
            + "Content-Type: application/json\r\n\r\n{}\r\n"
            + "--B0undary--\r\n"
        #expect(body == Data(expected.utf8))
        #expect(form.contentLength == Int64(body.count))
        #expect(form.contentType == "multipart/form-data; boundary=B0undary")
        guard case .parts(let parts) = form.body else { return }
        #expect(parts.count == 1, "adjacent in-memory pieces are merged")
    }

    @Test("a file part streams from disk: the body holds a region, not the bytes")
    func filePart() throws {
        let contents = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let url = try TemporaryFiles.write(contents, name: "photo.JPG")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        var form = try MultipartFormData(boundary: "b")
        try form.append(fileAt: url, name: "photo")
        guard case .parts(let parts) = form.body else {
            Issue.record("not parts")
            return
        }
        #expect(parts.count == 3)
        #expect(parts[1] == .file(RequestBody.FileRegion(url: url, offset: 0, length: 100_000, fileSize: 100_000)))
        let body = try Self.bytes(of: form.body)
        #expect(form.contentLength == Int64(body.count))
        let head = "--b\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"photo.JPG\"\r\nContent-Type: image/jpeg\r\n\r\n"
        #expect(body.prefix(head.utf8.count) == Data(head.utf8))
        #expect(body.dropFirst(head.utf8.count).prefix(100_000) == contents)
    }

    @Test("a random boundary is new each time and valid")
    func randomBoundary() throws {
        let first = MultipartFormData()
        let second = MultipartFormData()
        #expect(first.boundary != second.boundary)
        #expect(first.boundary.hasPrefix("curlew-"))
        #expect(first.boundary.count == 39)
        #expect(try MultipartFormData(boundary: first.boundary).boundary == first.boundary)
    }

    @Test("invalid boundaries are refused", arguments: ["", String(repeating: "x", count: 71), "a\r\nb", "ends ", "é"])
    func invalidBoundary(_ boundary: String) {
        #expect(throws: RequestSerializationError.self) { try MultipartFormData(boundary: boundary) }
    }

    @Test("names with quotes, CR and LF cannot break the framing")
    func escaping() throws {
        var form = try MultipartFormData(boundary: "b")
        try form.append(Data("v".utf8), name: "a\"b\r\nc", fileName: "f\"\n.txt")
        let body = String(decoding: try Self.bytes(of: form.body), as: UTF8.self)
        #expect(body.contains("name=\"a%22b%0D%0Ac\"; filename=\"f%22%0A.txt\"\r\nContent-Type: text/plain\r\n"))
    }

    @Test("MIME types from the extension; octet-stream otherwise", arguments: [
        ("jpg", "image/jpeg"), ("PNG", "image/png"), ("json", "application/json"), ("pdf", "application/pdf"),
        ("txt", "text/plain"), ("", "application/octet-stream"), ("weird", "application/octet-stream"),
    ])
    func mimeTypes(_ pathExtension: String, _ type: String) {
        #expect(MultipartFormData.mimeType(forPathExtension: pathExtension) == type)
    }

    @Test("parameters become plain fields named like a query's")
    func parameters() throws {
        var form = try MultipartFormData(boundary: "b")
        try form.append(parameters: ["title": "x", "tags": ["a", "b"], "flag": nil])
        let body = String(decoding: try Self.bytes(of: form.body), as: UTF8.self)
        let names = body.components(separatedBy: "name=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(names == ["flag", "tags[]", "tags[]", "title"])
    }

    @Test("errors: a missing file, a directory, a bad MIME type, GET and HEAD")
    func errors() throws {
        var form = MultipartFormData()
        #expect {
            try form.append(fileAt: URL(fileURLWithPath: "/nonexistent/curlew"), name: "f")
        } throws: { ($0 as? RequestSerializationError)?.code == .cannotReadFile }
        #expect {
            try form.append(fileAt: FileManager.default.temporaryDirectory, name: "f")
        } throws: { ($0 as? RequestSerializationError)?.code == .cannotReadFile }
        #expect {
            try form.append(Data(), name: "f", fileName: "x", mimeType: "text/plain\r\nX: y")
        } throws: { ($0 as? RequestSerializationError)?.code == .invalidMultipartForm }
        let url = URL(string: "http://127.0.0.1/upload")!
        for method in [HTTPRequest.Method.get, .head] {
            #expect {
                try HTTPRequestSerializer().multipartRequest(method: method, url: url, form: form)
            } throws: { ($0 as? RequestSerializationError)?.code == .invalidMethod }
        }
    }

    @Test("a multipart request: content type, body, the serializer's defaults")
    func request() throws {
        var serializer = JSONRequestSerializer()
        try serializer.setBearerToken("t")
        var form = MultipartFormData()
        try form.append(Data("x".utf8), name: "x")
        let request = try serializer.multipartRequest(url: URL(string: "http://127.0.0.1/upload")!, form: form)
        #expect(request.head.method == .post)
        #expect(request.head.headerFields[.contentType] == form.contentType)
        #expect(request.head.headerFields[.authorization] == "Bearer t")
        #expect(request.body == form.body)
    }
}
