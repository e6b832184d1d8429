import Foundation

/// One event of a `text/event-stream` body (Server-Sent Events, as the WHATWG HTML standard defines
/// them).
public struct ServerSentEvent: Sendable, Hashable {
    /// The event's type: its `event:` field, `"message"` when it had none.
    public var type: String
    /// Its `data:` lines, joined with newlines.
    public var data: String
    /// The last event ID when it was dispatched: its own `id:` field or an earlier event's (empty when
    /// no event set one). A reconnection sends it as `Last-Event-ID`.
    public var id: String

    /// Creates an event.
    public init(type: String = "message", data: String, id: String = "") {
        self.type = type
        self.data = data
        self.id = id
    }
}

/// Turns the bytes of a `text/event-stream` body into events, as they arrive, following the WHATWG
/// HTML standard's "interpreting an event stream": lines end in CRLF, LF or CR; a blank line
/// dispatches the event; `:` starts a comment; the fields are `event`, `data`, `id` and `retry`, and
/// any other is ignored; an event with no data is not dispatched; a leading byte-order mark is
/// skipped; an event the stream ends in the middle of is discarded.
///
/// A value with no I/O, fed any chunking of the bytes; linear in its input. Memory is bounded: a line
/// or an event's data longer than ``maximumEventSize`` bytes fails the stream with
/// ``ServerSentEventError/eventTooLarge(limit:)`` (a server that never ends a line cannot exhaust it).
///
/// ```swift
/// var parser = ServerSentEventParser()
/// let events = try parser.consume(Data("data: hello\n\n".utf8))   // [ServerSentEvent(data: "hello")]
/// ```
public struct ServerSentEventParser: Sendable {
    /// The default bound of one line or one event's data: 1 MiB.
    public static let defaultMaximumEventSize = 1 << 20

    /// The longest line, and the most data one event may gather, in bytes.
    public let maximumEventSize: Int
    /// The last event ID: set by an `id:` field, kept across events and reconnections.
    public private(set) var lastEventID = ""
    /// The reconnection time the server asked for with a `retry:` field, if any.
    public private(set) var reconnectionTime: Duration?

    private var line: [UInt8] = []
    /// The previous chunk ended in CR: a LF starting the next one ends no line.
    private var afterCarriageReturn = false
    private var isStart = true
    private var eventType = ""
    private var data: [UInt8] = []
    /// Whether the event being gathered had a `data:` field (an empty one counts).
    private var hasData = false

    /// Creates a parser.
    ///
    /// - Parameter maximumEventSize: The longest line and the most data one event may have, in bytes.
    public init(maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize) {
        self.maximumEventSize = max(1, maximumEventSize)
    }

    /// Takes the next bytes of the stream and returns the events they complete, in order.
    ///
    /// - Throws: ``ServerSentEventError/eventTooLarge(limit:)`` past ``maximumEventSize``.
    public mutating func consume(_ bytes: some Sequence<UInt8>) throws(ServerSentEventError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            switch byte {
            case 0x0A where self.afterCarriageReturn:
                self.afterCarriageReturn = false
            case 0x0A, 0x0D:
                self.afterCarriageReturn = byte == 0x0D
                self.isStart = false
                if let event = try self.endLine() { events.append(event) }
            default:
                self.afterCarriageReturn = false
                self.line.append(byte)
                if self.isStart { self.skipByteOrderMark() }
                guard self.line.count <= self.maximumEventSize else {
                    throw .eventTooLarge(limit: self.maximumEventSize)
                }
            }
        }
        return events
    }

    /// The stream ended (or the connection dropped): an event without its blank line is discarded,
    /// and the next bytes start a new stream (a reconnection). The last event ID and reconnection
    /// time are kept.
    public mutating func reset() {
        self.line.removeAll(keepingCapacity: true)
        self.afterCarriageReturn = false
        self.isStart = true
        self.eventType = ""
        self.data.removeAll(keepingCapacity: true)
        self.hasData = false
    }

    /// At the start of the stream, drops a UTF-8 byte-order mark once its three bytes are in; stops
    /// looking at the first byte that cannot be one.
    private mutating func skipByteOrderMark() {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let index = self.line.count - 1
        guard index < mark.count, self.line[index] == mark[index] else {
            self.isStart = false
            return
        }
        if self.line.count == mark.count {
            self.line.removeAll(keepingCapacity: true)
            self.isStart = false
        }
    }

    /// Interprets the line gathered so far; a blank line dispatches the event, if it has data.
    private mutating func endLine() throws(ServerSentEventError) -> ServerSentEvent? {
        defer { self.line.removeAll(keepingCapacity: true) }
        guard !self.line.isEmpty else { return self.dispatch() }
        if self.line[0] == UInt8(ascii: ":") { return nil }
        let colon = self.line.firstIndex(of: UInt8(ascii: ":"))
        let name = self.line[..<(colon ?? self.line.endIndex)]
        var valueStart = colon.map { $0 + 1 } ?? self.line.endIndex
        if valueStart < self.line.endIndex, self.line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = self.line[valueStart...]
        switch String(decoding: name, as: UTF8.self) {
        case "event":
            self.eventType = String(decoding: value, as: UTF8.self)
        case "data":
            guard self.data.count + value.count + 1 <= self.maximumEventSize else {
                throw .eventTooLarge(limit: self.maximumEventSize)
            }
            if self.hasData { self.data.append(0x0A) }
            self.data.append(contentsOf: value)
            self.hasData = true
        case "id":
            if !value.contains(0) { self.lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
               let milliseconds = Int64(String(decoding: value.prefix(15), as: UTF8.self)) {
                self.reconnectionTime = .milliseconds(milliseconds)
            }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            self.eventType = ""
            self.data.removeAll(keepingCapacity: true)
            self.hasData = false
        }
        guard self.hasData else { return nil }
        return ServerSentEvent(type: self.eventType.isEmpty ? "message" : self.eventType,
                               data: String(decoding: self.data, as: UTF8.self), id: self.lastEventID)
    }
}

/// Why a `text/event-stream` body could not be read.
public enum ServerSentEventError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A line, or one event's data, is longer than the parser's limit.
    case eventTooLarge(limit: Int)

    /// What went wrong, and the limit to raise.
    public var description: String {
        switch self {
        case .eventTooLarge(let limit):
            return "A server-sent event (or one of its lines) exceeds \(limit) bytes: raise maximumEventSize if it is legitimate."
        }
    }
}
