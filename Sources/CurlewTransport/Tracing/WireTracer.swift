/// Receives what curl says about a transfer's exchange with the server (`CURLOPT_DEBUGFUNCTION`):
/// its own notes, the request head as sent, each response header line, and how many body bytes
/// moved. Credentials never appear: the values of `Authorization`, `Proxy-Authorization`, `Cookie`
/// and `Set-Cookie` are replaced by `<redacted>`, and bodies are reported as byte counts only.
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

    /// The header fields whose values are secrets, lowercase.
    static let secretFields: [[UInt8]] = ["authorization", "proxy-authorization", "cookie", "set-cookie"].map { Array($0.utf8) }

    /// `text` with the value of every secret field replaced, line by line. A line holds a secret
    /// field when one of ``secretFields`` followed by `:` (in any case) starts it, or starts one of
    /// its bracketed parts: curl's HTTP/2 notes look like `[HTTP/2] [1] [cookie: a=b]`.
    static func redacting(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard Self.mayContainSecret(bytes) else { return text }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            if lineEnd < bytes.count { lineEnd += 1 }  // keep the LF with its line
            output += Self.redactingLine(bytes[lineStart..<lineEnd])
            lineStart = lineEnd
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether `bytes` contain "cookie" or "authorization" in any case: most text does not.
    private static func mayContainSecret(_ bytes: [UInt8]) -> Bool {
        let needles = [Array("cookie".utf8), Array("authorization".utf8)]
        guard bytes.count >= 6 else { return false }
        for index in bytes.indices {
            for needle in needles where Self.matches(needle, in: bytes[...], at: index) {
                return true
            }
        }
        return false
    }

    private static func redactingLine(_ line: ArraySlice<UInt8>) -> [UInt8] {
        var contentEnd = line.endIndex
        while contentEnd > line.startIndex && (line[contentEnd - 1] == UInt8(ascii: "\n") || line[contentEnd - 1] == UInt8(ascii: "\r")) {
            contentEnd -= 1
        }
        var starts = [line.startIndex]
        for index in line.startIndex..<contentEnd where line[index] == UInt8(ascii: "[") {
            starts.append(index + 1)
        }
        for start in starts {
            for name in Self.secretFields {
                let colon = start + name.count
                guard colon < contentEnd, line[colon] == UInt8(ascii: ":"), Self.matches(name, in: line, at: start) else {
                    continue
                }
                var redacted = Array(line[line.startIndex...colon]) + Array(" <redacted>".utf8)
                if line[contentEnd - 1] == UInt8(ascii: "]") { redacted.append(UInt8(ascii: "]")) }
                return redacted + Array(line[contentEnd..<line.endIndex])
            }
        }
        return Array(line)
    }

    /// Whether `needle` (lowercase ASCII) appears at `index` in `bytes`, ignoring ASCII case.
    private static func matches(_ needle: [UInt8], in bytes: ArraySlice<UInt8>, at index: Int) -> Bool {
        guard index >= bytes.startIndex, index + needle.count <= bytes.endIndex else { return false }
        for (offset, expected) in needle.enumerated() {
            var byte = bytes[index + offset]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 32 }
            if byte != expected { return false }
        }
        return true
    }
}
