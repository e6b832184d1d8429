/// What `.multipart` answers: each part of the `multipart/form-data` body as the server parsed it,
/// as JSON: `{"parts":[{"name":…,"filename":…,"contentType":…,"size":N,"checksum":"<16 hex>"},…],"bodyLength":N,"error":null}`.
///
/// Decode it with `JSONDecoder`. `error` says why the body was not valid multipart (then `parts`
/// holds the parts read before the problem).
public struct MultipartEchoReply: Codable, Sendable, Hashable {
    /// One part.
    public struct Part: Codable, Sendable, Hashable {
        /// The `name` of its `Content-Disposition`.
        public var name: String?
        /// The `filename` of its `Content-Disposition`.
        public var filename: String?
        /// Its `Content-Type`, as sent.
        public var contentType: String?
        /// Its content's length in bytes.
        public var size: Int
        /// ``FNV1a64/hexString`` of its content (the hash of no bytes when checksums were off).
        public var checksum: String

        /// Creates a part summary (the server builds these; tests usually decode them).
        public init(name: String?, filename: String?, contentType: String?, size: Int, checksum: String) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.size = size
            self.checksum = checksum
        }
    }

    /// The parts, in order.
    public var parts: [Part]
    /// Number of body bytes received.
    public var bodyLength: Int
    /// Why the body was not valid multipart, or `nil`.
    public var error: String?

    /// Creates a reply (the server builds these; tests usually decode them).
    public init(parts: [Part], bodyLength: Int, error: String?) {
        self.parts = parts
        self.bodyLength = bodyLength
        self.error = error
    }

    /// The JSON text, written by hand like ``EchoReply``'s.
    func json() -> String {
        var text = "{\"parts\":["
        for (index, part) in self.parts.enumerated() {
            if index > 0 { text += "," }
            text += "{\"name\":"
            Self.append(part.name, to: &text)
            text += ",\"filename\":"
            Self.append(part.filename, to: &text)
            text += ",\"contentType\":"
            Self.append(part.contentType, to: &text)
            text += ",\"size\":\(part.size),\"checksum\":"
            JSONText.appendString(part.checksum, to: &text)
            text += "}"
        }
        text += "],\"bodyLength\":\(self.bodyLength),\"error\":"
        Self.append(self.error, to: &text)
        text += "}"
        return text
    }

    private static func append(_ string: String?, to text: inout String) {
        if let string { JSONText.appendString(string, to: &text) } else { text += "null" }
    }
}
