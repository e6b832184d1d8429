import Curlew
import Foundation
import HTTPTypes

extension StubTransport.Response {
    /// A response whose body is the contents of `file`, read at once: fixtures kept beside the tests
    /// (a test target's resources, `Bundle.module.url(forResource:withExtension:)`) rather than
    /// strings in code. Unless `headerFields` has a `Content-Type`, one is chosen from the file's
    /// extension (`json`, `txt`, `html`, `xml`, `csv`, common images; `application/octet-stream`
    /// otherwise), so a response serializer that checks it accepts the body.
    ///
    /// - Parameters:
    ///   - file: The file whose bytes are the body.
    ///   - status: The status code; 200 by default.
    ///   - headerFields: The header fields; a `Content-Type` after the extension by default.
    ///   - delay: How long after `start()` it arrives; at once by default.
    /// - Throws: `TransferError` with `.cannotOpenFile` when the file cannot be read.
    public static func file(
        _ file: URL, status: Int = 200, headerFields: HTTPFields = [:], delay: Duration = .zero
    ) throws(TransferError) -> Self {
        let body: Data
        do {
            body = try Data(contentsOf: file)
        } catch {
            throw TransferError(.cannotOpenFile, "Cannot read the canned response \(file.path): \(error)")
        }
        var fields = headerFields
        if fields[.contentType] == nil {
            fields[.contentType] = Self.contentType(forPathExtension: file.pathExtension)
        }
        return Self(status: status, headerFields: fields, body: body, delay: delay)
    }

    /// The `Content-Type` of a canned response file with this extension (any case).
    static func contentType(forPathExtension pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "json": "application/json"
        case "txt", "text": "text/plain; charset=utf-8"
        case "html", "htm": "text/html; charset=utf-8"
        case "xml": "application/xml"
        case "csv": "text/csv; charset=utf-8"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        default: "application/octet-stream"
        }
    }
}
