import HTTPTypes

/// Turns the header lines curl hands to `CURLOPT_HEADERFUNCTION` into an `HTTPResponse`.
///
/// curl calls the header function once per line, CRLF included, for every response of a transfer:
/// informational ones (`100 Continue`), then the final one, then any trailers of a chunked body.
/// The parser is a value with no I/O so it is tested line by line.
///
/// While it parses, it notes the few fields the engine reads itself (``facts``), so that nobody
/// looks them up in the finished `HTTPFields` (a lookup by name joins every value of that name into
/// a new string).
struct ResponseHeadParser {
    /// What the engine reads from a head, as `head.headerFields[name]` would answer it.
    struct Facts: Equatable {
        /// `Content-Length` as a number, when there is exactly one that is a number.
        var contentLength: Int64?
        /// Whether `Content-Encoding` names an encoding (anything but `identity`).
        var isContentEncoded = false
        /// `Location` (several are joined with `, `, as `HTTPFields` joins them).
        var location: String?
        fileprivate var contentLengthCount = 0

        init(contentLength: Int64? = nil, isContentEncoded: Bool = false, location: String? = nil) {
            self.contentLength = contentLength
            self.isContentEncoded = isContentEncoded
            self.location = location
        }

        /// Equal when what they say is equal (the count of `Content-Length` fields is bookkeeping).
        static func == (lhs: Facts, rhs: Facts) -> Bool {
            lhs.contentLength == rhs.contentLength && lhs.isContentEncoded == rhs.isContentEncoded
                && lhs.location == rhs.location
        }
    }

    enum Event: Hashable {
        /// Keep going.
        case needMore
        /// An informational (1xx) head ended; the next status line starts a new one.
        case informational
        /// The final head is complete.
        case complete(HTTPResponse)
        /// The head exceeds the limit.
        case tooLarge
        /// The status line is not HTTP.
        case malformed
    }

    private enum Phase: Hashable {
        case statusLine
        case fields
        case trailers
        /// After a final head that curl may answer (an authentication challenge): a status line
        /// starts the next response; other lines are trailers.
        case trailersOrNextResponse
    }

    private var phase: Phase = .statusLine
    private var status: HTTPResponse.Status = .ok
    private var fields = HTTPFields()
    /// The facts of the head being parsed; final once ``Event/complete(_:)`` was returned. `nil` when
    /// a folded line changed a field after it was noted: then look the fields up.
    private(set) var facts: Facts? = Facts()
    private var size = 0
    private let limit: Int
    /// Whether any line of a response (a status line, valid or not) has arrived.
    private(set) var hasStarted = false

    /// Room for the fields of a typical response head, reserved once instead of growing the array
    /// four times (a server like nginx sends 6–9 fields).
    static let expectedFieldCount = 16

    /// - Parameter limit: the most bytes one head (status line and fields) may have.
    init(limit: Int) {
        self.limit = limit
    }

    mutating func consume(_ rawLine: UnsafeRawBufferPointer) -> Event {
        self.hasStarted = true
        let line = Self.trimmingLineEnd(rawLine)
        switch self.phase {
        case .trailers:
            return .needMore
        case .trailersOrNextResponse:
            guard line.starts(with: "HTTP/".utf8) else { return .needMore }
            self.phase = .statusLine
            return self.consume(rawLine)
        case .statusLine:
            self.size = rawLine.count
            guard let status = Self.parseStatusLine(line) else { return .malformed }
            self.status = status
            self.fields = HTTPFields()
            self.fields.reserveCapacity(Self.expectedFieldCount)
            self.facts = Facts()
            self.phase = .fields
            return self.size > self.limit ? .tooLarge : .needMore
        case .fields:
            self.size += rawLine.count
            guard self.size <= self.limit else { return .tooLarge }
            if line.isEmpty {
                if self.status.kind == .informational && self.status.code != 101 {
                    self.phase = .statusLine
                    return .informational
                }
                self.phase = .trailers
                return .complete(HTTPResponse(status: self.status, headerFields: self.fields))
            }
            self.appendField(line)
            return .needMore
        }
    }

    /// Lets a status line after the final head start another response: curl sends the request
    /// again, with credentials, when it answers a `401` itself.
    mutating func acceptFollowingResponse() {
        if self.phase == .trailers { self.phase = .trailersOrNextResponse }
    }

    private mutating func appendField(_ line: UnsafeRawBufferPointer) {
        // An obsolete folded line continues the previous field's value.
        if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            guard !self.fields.isEmpty else { return }
            let last = self.fields.count - 1
            let continuation = String(decoding: Self.trimmingWhitespace(line[...]), as: UTF8.self)
            self.fields[last].value += " " + continuation
            self.facts = nil
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return }
        let nameBytes = line[..<colon]
        // A String first: HTTPField's initializer from bytes is generic, and measured 2–3k
        // instructions per response dearer than validating a String.
        let value = String(decoding: Self.trimmingWhitespace(line[(colon + 1)...]), as: UTF8.self)
        if let known = KnownFieldNames.name(for: nameBytes) {
            let field = HTTPField(name: known.name, value: value)
            if let role = known.role { self.note(role, field.value) }
            self.fields.append(field)
        } else if let name = HTTPField.Name(String(decoding: nameBytes, as: UTF8.self)) {
            self.fields.append(HTTPField(name: name, value: value))
        }
    }

    /// Notes a field the engine reads, as its (legalized) value.
    private mutating func note(_ role: KnownFieldNames.Role, _ value: String) {
        guard var facts = self.facts else { return }
        switch role {
        case .contentLength:
            facts.contentLengthCount += 1
            facts.contentLength = facts.contentLengthCount == 1 ? Int64(value) : nil
        case .contentEncoding:
            facts.isContentEncoded = facts.isContentEncoded || value.lowercased() != "identity"
        case .location:
            facts.location = facts.location.map { $0 + ", " + value } ?? value
        }
        self.facts = facts
    }

    /// `HTTP/1.1 200 OK`, `HTTP/2 200`, `HTTP/1.0 404 Not Found`.
    static func parseStatusLine(_ line: UnsafeRawBufferPointer) -> HTTPResponse.Status? {
        let prefix = "HTTP/".utf8
        guard line.count >= prefix.count + 4, line.starts(with: prefix) else { return nil }
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        var index = space + 1
        var code = 0
        for _ in 0..<3 {
            guard index < line.count, let digit = Self.digit(line[index]) else { return nil }
            code = code * 10 + digit
            index += 1
        }
        guard code >= 100 && code <= 999 else { return nil }
        var reason = ""
        if index < line.count {
            guard line[index] == UInt8(ascii: " ") else { return nil }
            reason = String(decoding: Self.trimmingWhitespace(line[(index + 1)...]), as: UTF8.self)
        }
        return HTTPResponse.Status(code: code, reasonPhrase: reason)
    }

    private static func digit(_ byte: UInt8) -> Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
    }

    private static func trimmingLineEnd(_ line: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var end = line.count
        while end > 0 && (line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r")) {
            end -= 1
        }
        return UnsafeRawBufferPointer(rebasing: line[0..<end])
    }

    private static func trimmingWhitespace(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end && (bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t")) { start += 1 }
        while end > start && (bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t")) { end -= 1 }
        return bytes[start..<end]
    }
}
