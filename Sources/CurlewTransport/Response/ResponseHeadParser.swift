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
///
/// It also holds the final head's framing to RFC 9112 §6.3, which curl does not: curl 7.88 takes
/// the last of two different `Content-Length` fields, the first value of a list (`5, 8`), the
/// digits before junk (`12abc`), and reads a length that overflows (10^23) as no length at all —
/// each a way for a server or a middlebox to make the client and an intermediary disagree on where
/// the body ends. Such a head ends in ``Event/invalidFraming(_:)``.
struct ResponseHeadParser {
    /// What the engine reads from a head.
    struct Facts: Equatable {
        /// `Content-Length` as a number: the one value of every `Content-Length` field and list
        /// element (RFC 9112 §6.3 allows repeating the same value), `nil` when there is none or
        /// the framing is invalid.
        var contentLength: Int64?
        /// Whether `Content-Encoding` names an encoding (anything but `identity`).
        var isContentEncoded = false
        /// `Location` (several are joined with `, `, as `HTTPFields` joins them).
        var location: String?
        /// Why the head's framing is invalid (a `Content-Length` that is not one non-negative
        /// 64-bit decimal, or one beside `Transfer-Encoding`), naming the field; `nil` when valid.
        var framingError: String?
        fileprivate var hasContentLength = false
        fileprivate var hasTransferEncoding = false

        init(contentLength: Int64? = nil, isContentEncoded: Bool = false, location: String? = nil, framingError: String? = nil) {
            self.contentLength = contentLength
            self.isContentEncoded = isContentEncoded
            self.location = location
            self.framingError = framingError
        }

        /// The facts of `fields`, noted one by one (for a head whose fields changed after noting).
        init(_ fields: HTTPFields) {
            self.init()
            for field in fields {
                switch field.name {
                case .contentLength: self.note(.contentLength, field.value)
                case .contentEncoding: self.note(.contentEncoding, field.value)
                case .location: self.note(.location, field.value)
                case .transferEncoding: self.note(.transferEncoding, field.value)
                default: break
                }
            }
        }

        /// Equal when what they say is equal (which fields were seen is bookkeeping).
        static func == (lhs: Facts, rhs: Facts) -> Bool {
            lhs.contentLength == rhs.contentLength && lhs.isContentEncoded == rhs.isContentEncoded
                && lhs.location == rhs.location && lhs.framingError == rhs.framingError
        }

        /// Notes a field the engine reads, as its (legalized) value.
        fileprivate mutating func note(_ role: KnownFieldNames.Role, _ value: String) {
            switch role {
            case .contentLength:
                self.noteContentLength(value)
            case .transferEncoding:
                self.hasTransferEncoding = true
                self.checkTransferEncodingBesideLength()
            case .contentEncoding:
                self.isContentEncoded = self.isContentEncoded || value.lowercased() != "identity"
            case .location:
                self.location = self.location.map { $0 + ", " + value } ?? value
            }
        }

        private mutating func noteContentLength(_ value: String) {
            let isFirst = !self.hasContentLength
            self.hasContentLength = true
            guard self.framingError == nil else { return }
            guard let length = ResponseHeadParser.contentLength(value) else {
                self.fail("The response's Content-Length \"\(value.prefix(64))\" is not a non-negative decimal number "
                          + "that fits 64 bits, nor a list repeating one (RFC 9112 §6.3).")
                return
            }
            if !isFirst, let previous = self.contentLength, previous != length {
                self.fail("The response has two different Content-Length values, \(previous) and \(length) (RFC 9112 §6.3).")
                return
            }
            self.contentLength = length
            self.checkTransferEncodingBesideLength()
        }

        private mutating func checkTransferEncodingBesideLength() {
            guard self.framingError == nil, self.hasTransferEncoding, self.hasContentLength else { return }
            self.fail("The response has both Transfer-Encoding and Content-Length: a response-splitting attempt? "
                      + "(RFC 9112 §6.3).")
        }

        private mutating func fail(_ reason: String) {
            self.framingError = reason
            self.contentLength = nil
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
        /// The final head is complete but says nothing trustworthy about where its body ends
        /// (RFC 9112 §6.3): the reason, naming the field.
        case invalidFraming(String)
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
    /// The facts of the head being parsed; final once ``Event/complete(_:)`` was returned.
    private(set) var facts = Facts()
    /// Whether a folded line changed a field after it was noted: the facts are then noted again
    /// from the finished fields.
    private var foldedAfterNoting = false
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
            self.foldedAfterNoting = false
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
                if self.foldedAfterNoting { self.facts = Facts(self.fields) }
                if let reason = self.facts.framingError { return .invalidFraming(reason) }
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
            self.foldedAfterNoting = true
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return }
        let nameBytes = line[..<colon]
        // A String first: HTTPField's initializer from bytes is generic, and measured 2–3k
        // instructions per response dearer than validating a String.
        let value = String(decoding: Self.trimmingWhitespace(line[(colon + 1)...]), as: UTF8.self)
        if let known = KnownFieldNames.name(for: nameBytes) {
            let field = HTTPField(name: known.name, value: value)
            if let role = known.role { self.facts.note(role, field.value) }
            self.fields.append(field)
        } else if let name = HTTPField.Name(String(decoding: nameBytes, as: UTF8.self)) {
            self.fields.append(HTTPField(name: name, value: value))
        }
    }

    /// The value of a `Content-Length` field (RFC 9112 §6.3): one non-negative decimal number that
    /// fits `Int64`, or a comma-separated list of the same number (`42, 42`); `nil` for anything
    /// else (empty, a sign, junk, an overflow, different numbers). Linear in the value.
    static func contentLength(_ value: String) -> Int64? {
        var result: Int64?
        var current: Int64 = 0
        var digits = 0
        var pendingSpace = false
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard !pendingSpace else { return nil }  // `4 2` is not a number
                let (times10, overflow1) = current.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { return nil }
                current = sum
                digits += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                pendingSpace = digits > 0
            case UInt8(ascii: ","):
                guard digits > 0, result == nil || result == current else { return nil }
                result = current
                current = 0
                digits = 0
                pendingSpace = false
            default:
                return nil
            }
        }
        guard digits > 0, result == nil || result == current else { return nil }
        return current
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
