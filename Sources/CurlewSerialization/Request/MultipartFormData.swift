import CurlewTransport
import Foundation

/// A `multipart/form-data` body (RFC 7578) whose file parts are streamed from disk: AFNetworking's
/// `AFMultipartFormData`.
///
/// Append fields and files, then make a request with
/// ``RequestSerializer/multipartRequest(method:url:form:)``. Nothing is read from a file here: a
/// file part records the file's size, and the transfer reads it as curl asks for bytes, so a 1 GiB
/// file uploads with flat memory. The total length is known before sending (curl announces it as
/// `Content-Length`); if a file's size changes before the transfer reads it, the transfer fails
/// with `TransferError/Code/requestBodyFileChanged` rather than send a short body.
///
/// ```swift
/// var form = MultipartFormData()
/// try form.append(Data("Holiday".utf8), name: "title")
/// try form.append(fileAt: URL(fileURLWithPath: "/tmp/beach.jpg"), name: "photo")   // image/jpeg
/// let request = try HTTPRequestSerializer().multipartRequest(url: uploadURL, form: form)
/// ```
///
/// The body is framed as RFC 2046 says: `--boundary` CRLF before each part, the part's headers, an
/// empty line, its content, CRLF, and `--boundary--` CRLF at the end. Field names and file names go
/// into `Content-Disposition` as quoted strings, with `"`, CR and LF written `%22`, `%0D` and `%0A`
/// (the HTML form encoding), so no name can break the framing.
public struct MultipartFormData: Sendable, Hashable {
    /// The boundary between parts.
    public let boundary: String
    /// The body so far; adjacent in-memory pieces are merged.
    private var pieces: [RequestBody.Part] = []

    /// A form with a random boundary (`curlew-` and 32 hexadecimal digits of a 128-bit random
    /// number), which no content will contain by chance.
    public init() {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        self.boundary = "curlew-" + Self.hex(high) + Self.hex(low)
    }

    /// A form with a boundary of your choosing (for reproducible bodies in tests).
    ///
    /// - Parameter boundary: 1 to 70 characters of RFC 2046's `bchars` (letters, digits and
    ///   `'()+_,-./:=?`), not ending in a space.
    /// - Throws: ``RequestSerializationError/Code/invalidMultipartForm`` for any other boundary.
    public init(boundary: String) throws(RequestSerializationError) {
        let allowed = Set("'()+_,-./:=? ".utf8)
        guard (1...70).contains(boundary.utf8.count), boundary.utf8.last != UInt8(ascii: " "),
              boundary.utf8.allSatisfy({ FormPercentEncoding.isUnreserved($0) && $0 != UInt8(ascii: "~") || allowed.contains($0) })
        else {
            throw RequestSerializationError(.invalidMultipartForm, "\"\(boundary)\" is not a valid multipart boundary.")
        }
        self.boundary = boundary
    }

    /// `multipart/form-data; boundary=…`, the request's `Content-Type`.
    public var contentType: String {
        "multipart/form-data; boundary=\(self.boundary)"
    }

    /// The body: the parts so far and the closing boundary.
    public var body: RequestBody {
        var pieces = self.pieces
        Self.append(.data(Data("--\(self.boundary)--\r\n".utf8)), to: &pieces)
        return .parts(pieces)
    }

    /// The body's length in bytes, as `Content-Length` will announce it.
    public var contentLength: Int64 {
        self.pieces.reduce(0) { $0 + $1.length } + Int64(self.boundary.utf8.count + 6)
    }

    // MARK: Appending

    /// Appends a part with `data` as its content.
    ///
    /// Without `fileName` and `mimeType` this is a plain field (no `Content-Type`, read as text by
    /// the server). With a `fileName`, it is a file; its type is `mimeType`, or the one its
    /// extension implies (see ``mimeType(forPathExtension:)``).
    ///
    /// - Parameters:
    ///   - data: The content.
    ///   - name: The field name.
    ///   - fileName: The file name the server sees, or `nil` for a plain field.
    ///   - mimeType: The part's `Content-Type`, or `nil`.
    /// - Throws: ``RequestSerializationError/Code/invalidMultipartForm`` when `mimeType` is not a
    ///   valid header value.
    public mutating func append(_ data: Data, name: String, fileName: String? = nil, mimeType: String? = nil) throws(RequestSerializationError) {
        let type = try mimeType.map(Self.checkedMIMEType) ?? fileName.map { Self.mimeType(forPathExtension: Self.pathExtension(of: $0)) }
        self.appendHead(name: name, fileName: fileName, mimeType: type)
        Self.append(.data(data), to: &self.pieces)
        Self.append(.data(Data("\r\n".utf8)), to: &self.pieces)
    }

    /// Appends a part whose content is the file at `url`, streamed when the request is sent.
    ///
    /// The file must exist, be a regular file and be readable now; its size now is the part's
    /// length.
    ///
    /// - Parameters:
    ///   - url: A `file:` URL.
    ///   - name: The field name.
    ///   - fileName: The file name the server sees; the URL's last path component by default.
    ///   - mimeType: The part's `Content-Type`; by default the one the file name's extension implies
    ///     (see ``mimeType(forPathExtension:)``).
    /// - Throws: ``RequestSerializationError/Code/cannotReadFile`` when the file cannot be used;
    ///   ``RequestSerializationError/Code/invalidMultipartForm`` when `mimeType` is not a valid
    ///   header value.
    public mutating func append(fileAt url: URL, name: String, fileName: String? = nil, mimeType: String? = nil) throws(RequestSerializationError) {
        let region: RequestBody.FileRegion
        do {
            region = try RequestBody.FileRegion(wholeFileAt: url)
        } catch {
            throw RequestSerializationError(.cannotReadFile, error.message)
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw RequestSerializationError(.cannotReadFile, "\(url.path) is not readable.")
        }
        let shownName = fileName ?? url.lastPathComponent
        let type = try mimeType.map(Self.checkedMIMEType) ?? Self.mimeType(forPathExtension: Self.pathExtension(of: shownName))
        self.appendHead(name: name, fileName: shownName, mimeType: type)
        Self.append(.file(region), to: &self.pieces)
        Self.append(.data(Data("\r\n".utf8)), to: &self.pieces)
    }

    /// Appends one plain field per parameter, named as a query string would name it (`a[b]`, `a[]`),
    /// in the same order; a name that stands alone (null) gets an empty value.
    ///
    /// - Parameters:
    ///   - parameters: Any `Encodable` whose top level is keyed.
    ///   - encoder: How names are built and values written.
    /// - Throws: ``RequestSerializationError/Code/invalidParameters`` as ``URLEncodedFormEncoder/pairs(_:)``.
    public mutating func append(parameters: some Encodable, encoder: URLEncodedFormEncoder = URLEncodedFormEncoder()) throws(RequestSerializationError) {
        for pair in try encoder.pairs(parameters) {
            try self.append(Data((pair.value ?? "").utf8), name: pair.name)
        }
    }

    /// Appends one plain field per literal parameter: `["title": "Holiday", "tags": ["a", "b"]]`.
    ///
    /// - Throws: As ``append(parameters:encoder:)-(Encodable,_)``.
    public mutating func append(parameters: Parameters, encoder: URLEncodedFormEncoder = URLEncodedFormEncoder()) throws(RequestSerializationError) {
        for pair in try encoder.pairs(parameters) {
            try self.append(Data((pair.value ?? "").utf8), name: pair.name)
        }
    }

    // MARK: Framing

    private mutating func appendHead(name: String, fileName: String?, mimeType: String?) {
        var head = "--\(self.boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escaped(name))\""
        if let fileName { head += "; filename=\"\(Self.escaped(fileName))\"" }
        head += "\r\n"
        if let mimeType { head += "Content-Type: \(mimeType)\r\n" }
        head += "\r\n"
        Self.append(.data(Data(head.utf8)), to: &self.pieces)
    }

    /// A name as a quoted-string's content: `"`, CR and LF percent-encoded (WHATWG's form encoding).
    static func escaped(_ name: String) -> String {
        var result = ""
        result.reserveCapacity(name.utf8.count)
        for scalar in name.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            case "\0": result += "%00"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func checkedMIMEType(_ type: String) throws(RequestSerializationError) -> String {
        do {
            return try HeaderValidation.value(type, of: "Content-Type")
        } catch {
            throw RequestSerializationError(.invalidMultipartForm, "\"\(type)\" is not a valid part Content-Type: \(error.message)")
        }
    }

    private static func pathExtension(of fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), fileName.index(after: dot) < fileName.endIndex else { return "" }
        return String(fileName[fileName.index(after: dot)...])
    }

    /// Appends `part`, merging it into the previous piece when both are in memory.
    private static func append(_ part: RequestBody.Part, to pieces: inout [RequestBody.Part]) {
        if case .data(let next) = part, case .data(var last)? = pieces.last {
            last.append(next)
            pieces[pieces.count - 1] = .data(last)
        } else {
            pieces.append(part)
        }
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
