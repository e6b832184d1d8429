import HTTPTypes

/// Receives what curl says about a transfer's exchange with the server (`CURLOPT_DEBUGFUNCTION`):
/// its own notes, the request head as sent, each response header line, and how many body bytes
/// moved. Credentials never appear: the values of `Authorization`, `Proxy-Authorization`, `Cookie`,
/// `Set-Cookie` and the request's ``TransferOptions/secretHeaderNames`` are replaced by
/// `<redacted>`, and bodies are reported as byte counts only.
///
/// Set it as ``TransferOptions/wireTracer`` only while someone listens: without a tracer curl is not
/// asked to describe anything, which costs nothing; with one, every transfer makes a call per
/// header line and body chunk on the engine's context, so keep the handler short.
///
/// ```swift
/// request.options.wireTracer = WireTracer { transferID, event in
///     logger.trace("\(event)", metadata: ["transfer": "\(transferID)"])
/// }
/// ```
public final class WireTracer: Sendable, Hashable {
    /// One thing curl reported.
    public enum Event: Sendable, Hashable, CustomStringConvertible {
        /// curl's own note ("Connected to …", "TLSv1.3 …"), one line, credentials redacted.
        case note(String)
        /// The request head as sent, lines separated by CRLF, credentials redacted.
        case requestHead(String)
        /// One response header line (the status line included), credentials redacted.
        case responseHeader(String)
        /// Request body bytes sent.
        case requestBody(bytes: Int)
        /// Response body bytes received (before decompression).
        case responseBody(bytes: Int)

        /// The event as curl's verbose output shows it: `* note`, `> request line`, `< response line`,
        /// `> [n body bytes]`.
        public var description: String {
            switch self {
            case .note(let text): return "* \(text)"
            case .requestHead(let head): return "> " + head.split(separator: "\r\n").joined(separator: "\n> ")
            case .responseHeader(let line): return "< \(line)"
            case .requestBody(let bytes): return "> [\(bytes) body bytes]"
            case .responseBody(let bytes): return "< [\(bytes) body bytes]"
            }
        }
    }

    /// Called with the transfer's ``Transfer/id`` and the event, on the engine's context.
    let handler: @Sendable (UInt64, Event) -> Void

    /// Creates a tracer.
    ///
    /// - Parameter handler: Called with the transfer's id and each event, on the engine's context
    ///   (every transfer of the engine waits while it runs).
    public init(_ handler: @escaping @Sendable (_ transferID: UInt64, _ event: Event) -> Void) {
        self.handler = handler
    }

    /// Whether two values are the same tracer: a tracer is equal only to itself, so transfer
    /// options that carry it compare by identity.
    public static func == (lhs: WireTracer, rhs: WireTracer) -> Bool {
        lhs === rhs
    }

    /// Hashes the tracer's identity, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    // MARK: Redaction

    /// The header fields whose values are always secrets, lowercase.
    static let secretFields: [[UInt8]] = ["authorization", "proxy-authorization", "cookie", "set-cookie"].map { Array($0.utf8) }

    /// `text` with the value of every secret field replaced, line by line: ``secretFields`` and
    /// `secretHeaderNames`. A line holds a secret field when its name followed by `:` (in any case)
    /// starts it, or starts one of its bracketed parts: curl's HTTP/2 notes look like
    /// `[HTTP/2] [1] [cookie: a=b]`.
    ///
    /// Text that names no secret field is returned as it is, without allocating.
    static func redacting(_ text: String, secretHeaderNames: Set<HTTPField.Name>) -> String {
        var text = text
        let redacted: String? = text.withUTF8 { bytes in
            guard Self.mayContainSecret(bytes, secretHeaderNames: secretHeaderNames) else { return nil }
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count + 16)
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                if lineEnd < bytes.count { lineEnd += 1 }  // keep the LF with its line
                Self.appendRedacting(bytes, lineStart..<lineEnd, secretHeaderNames: secretHeaderNames, to: &output)
                lineStart = lineEnd
            }
            return String(decoding: output, as: UTF8.self)
        }
        return redacted ?? text
    }

    /// Whether `bytes` contain "cookie" or "authorization" (which every one of ``secretFields``
    /// contains) or one of `secretHeaderNames`, in any case: most text does not. It reads static
    /// strings and loops over indices, because an array's iterator allocates in a debug build.
    private static func mayContainSecret(_ bytes: UnsafeBufferPointer<UInt8>, secretHeaderNames: Set<HTTPField.Name>) -> Bool {
        let cookie: StaticString = "cookie"
        let authorization: StaticString = "authorization"
        if cookie.withUTF8Buffer({ Self.contains($0, in: bytes) }) || authorization.withUTF8Buffer({ Self.contains($0, in: bytes) }) {
            return true
        }
        for name in secretHeaderNames {
            var lowercase = name.canonicalName
            if lowercase.withUTF8({ Self.contains($0, in: bytes) }) { return true }
        }
        return false
    }

    /// Appends the line at `line` in `bytes` to `output`, its value replaced when a secret field starts
    /// the line or one of its bracketed parts.
    private static func appendRedacting(
        _ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>, secretHeaderNames: Set<HTTPField.Name>,
        to output: inout [UInt8]
    ) {
        var contentEnd = line.upperBound
        while contentEnd > line.lowerBound && (bytes[contentEnd - 1] == UInt8(ascii: "\n") || bytes[contentEnd - 1] == UInt8(ascii: "\r")) {
            contentEnd -= 1
        }
        var start = line.lowerBound
        while start < contentEnd {
            if let colon = Self.secretFieldColon(in: bytes, at: start, before: contentEnd, secretHeaderNames: secretHeaderNames) {
                output += bytes[line.lowerBound...colon]
                output += " <redacted>".utf8
                if bytes[contentEnd - 1] == UInt8(ascii: "]") { output.append(UInt8(ascii: "]")) }
                output += bytes[contentEnd..<line.upperBound]
                return
            }
            // The next bracketed part, if any.
            start += 1
            while start < contentEnd && bytes[start - 1] != UInt8(ascii: "[") { start += 1 }
        }
        output += bytes[line]
    }

    /// The index of the `:` after a secret field's name that starts at `start`, or `nil`.
    private static func secretFieldColon(
        in bytes: UnsafeBufferPointer<UInt8>, at start: Int, before end: Int, secretHeaderNames: Set<HTTPField.Name>
    ) -> Int? {
        func colon(after name: UnsafeBufferPointer<UInt8>) -> Int? {
            let colon = start + name.count
            guard colon < end, bytes[colon] == UInt8(ascii: ":"), Self.matches(name, in: bytes, at: start) else { return nil }
            return colon
        }
        for name in Self.secretFields {
            if let colon = name.withUnsafeBufferPointer(colon(after:)) { return colon }
        }
        for name in secretHeaderNames {
            var lowercase = name.canonicalName
            if let colon = lowercase.withUTF8(colon(after:)) { return colon }
        }
        return nil
    }

    /// Whether `needle` (lowercase ASCII) appears anywhere in `bytes`, ignoring ASCII case.
    private static func contains(_ needle: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index + needle.count <= bytes.count {
            if Self.matches(needle, in: bytes, at: index) { return true }
            index += 1
        }
        return false
    }

    /// Whether `needle` (lowercase ASCII) appears at `index` in `bytes`, ignoring ASCII case.
    private static func matches(_ needle: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        guard index + needle.count <= bytes.count else { return false }
        var offset = 0
        while offset < needle.count {
            var byte = bytes[index + offset]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 32 }
            if byte != needle[offset] { return false }
            offset += 1
        }
        return true
    }
}
