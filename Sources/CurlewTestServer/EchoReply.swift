import NIOCore

/// What `.echo` and `.upload` answer: the request as the server saw it, as JSON with keys in this order:
/// `{"method":…,"path":…,"query":…,"headers":[[name,value],…],"bodyLength":N,"bodyChecksum":"<16 hex>"}`.
///
/// Decode it with `JSONDecoder`. Headers keep their order and, over HTTP/1.1, their case; over HTTP/2
/// names are lowercase and `:authority` appears as `host`.
public struct EchoReply: Codable, Sendable, Hashable {
    /// The request method, for example `"POST"`.
    public var method: String
    /// The request path as sent (still percent-encoded), without the query.
    public var path: String
    /// The raw query after `?` (empty when there was none).
    public var query: String
    /// Every request header as a `[name, value]` pair, in order.
    public var headers: [[String]]
    /// Number of body bytes received.
    public var bodyLength: Int
    /// ``FNV1a64/hexString`` of the body: compare with `FNV1a64.hex(TestServer.checksum(sent))`.
    public var bodyChecksum: String

    /// Creates a reply (the server builds these; tests usually decode them).
    public init(method: String, path: String, query: String, headers: [[String]], bodyLength: Int, bodyChecksum: String) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.bodyLength = bodyLength
        self.bodyChecksum = bodyChecksum
    }

    /// The values of every header named `name` (compared case-insensitively), in order.
    public func headerValues(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return self.headers.compactMap { pair in
            pair.count == 2 && pair[0].lowercased() == wanted ? pair[1] : nil
        }
    }

    /// The JSON text, written by hand so key order and escaping are fixed and no encoder is involved.
    func json() -> String {
        var text = "{\"method\":"
        JSONText.appendString(self.method, to: &text)
        text += ",\"path\":"
        JSONText.appendString(self.path, to: &text)
        text += ",\"query\":"
        JSONText.appendString(self.query, to: &text)
        text += ",\"headers\":["
        for (index, pair) in self.headers.enumerated() {
            if index > 0 { text += "," }
            text += "["
            for (position, item) in pair.enumerated() {
                if position > 0 { text += "," }
                JSONText.appendString(item, to: &text)
            }
            text += "]"
        }
        text += "],\"bodyLength\":\(self.bodyLength),\"bodyChecksum\":"
        JSONText.appendString(self.bodyChecksum, to: &text)
        text += "}"
        return text
    }
}

/// JSON string escaping (RFC 8259): quotes, backslashes and control characters; the rest stays UTF-8.
enum JSONText {
    static func appendString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
