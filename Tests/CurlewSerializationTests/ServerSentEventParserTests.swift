import CurlewSerialization
import Foundation
import Testing

/// The WHATWG HTML standard's event-stream examples (§9.2.5), line endings, chunking and the size limit.
@Suite("ServerSentEventParser")
struct ServerSentEventParserTests {
    private func events(_ text: String, chunk: Int = .max) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        let bytes = Array(text.utf8)
        var events: [ServerSentEvent] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + max(1, min(chunk, bytes.count)))
            events += try parser.consume(bytes[start..<end])
            start = end
        }
        return events
    }

    @Test("the stock example: three data lines make one message", arguments: [1, 2, 7, Int.max])
    func stock(chunk: Int) throws {
        let events = try self.events("data: YHOO\ndata: +2\ndata: 10\n\n", chunk: chunk)
        #expect(events == [ServerSentEvent(data: "YHOO\n+2\n10")])
    }

    @Test("comments, ids kept and reset, one leading space removed", arguments: [1, 3, Int.max])
    func idsAndSpaces(chunk: Int) throws {
        let text = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
        let events = try self.events(text, chunk: chunk)
        #expect(events == [
            ServerSentEvent(data: "first event", id: "1"),
            ServerSentEvent(data: "second event", id: ""),
            ServerSentEvent(data: " third event", id: ""),
        ])
    }

    @Test("empty data fields dispatch; an event the stream ends in is discarded")
    func emptyData() throws {
        let events = try self.events("data\n\ndata\ndata\n\ndata:")
        #expect(events == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
    }

    @Test("a space after the colon is optional")
    func optionalSpace() throws {
        #expect(try self.events("data:test\n\ndata: test\n\n") == [ServerSentEvent(data: "test"), ServerSentEvent(data: "test")])
    }

    @Test("CRLF, CR and LF end lines, also when a CRLF is split between chunks", arguments: ["\r\n", "\r", "\n"])
    func lineEndings(ending: String) throws {
        let text = "event: tick\(ending)data: 1\(ending)id: 7\(ending)\(ending)data: 2\(ending)\(ending)"
        for chunk in [1, 2, 5, Int.max] {
            let events = try self.events(text, chunk: chunk)
            #expect(events == [ServerSentEvent(type: "tick", data: "1", id: "7"), ServerSentEvent(data: "2", id: "7")],
                    "ending \(ending.debugDescription), chunks of \(chunk)")
        }
    }

    @Test("retry sets the reconnection time only when it is all digits; unknown fields are ignored")
    func retry() throws {
        var parser = ServerSentEventParser()
        _ = try parser.consume(Array("retry: 2500\nretry: 12x\nfoo: bar\ndata: x\n\n".utf8))
        #expect(parser.reconnectionTime == .milliseconds(2500))
    }

    @Test("a byte-order mark is skipped at the start of the stream only")
    func byteOrderMark() throws {
        #expect(try self.events("\u{FEFF}data: a\n\n", chunk: 1) == [ServerSentEvent(data: "a")])
        #expect(try self.events("data: \u{FEFF}a\n\n") == [ServerSentEvent(data: "\u{FEFF}a")])
    }

    @Test("an id with NUL is ignored; the last id survives a reset (a reconnection)")
    func idRules() throws {
        var parser = ServerSentEventParser()
        _ = try parser.consume(Array("id: 5\n\nid: a\u{0}b\ndata: x\n\ndata: partial".utf8))
        #expect(parser.lastEventID == "5")
        parser.reset()
        #expect(try parser.consume(Array("data: y\n\n".utf8)) == [ServerSentEvent(data: "y", id: "5")])
    }

    @Test("a line or an event past the limit fails instead of growing")
    func limits() throws {
        var parser = ServerSentEventParser(maximumEventSize: 64)
        #expect(throws: ServerSentEventError.eventTooLarge(limit: 64)) {
            _ = try parser.consume(Array(repeating: UInt8(ascii: "a"), count: 1_000))
        }
        var many = ServerSentEventParser(maximumEventSize: 64)
        #expect(throws: ServerSentEventError.eventTooLarge(limit: 64)) {
            _ = try many.consume(Array(String(repeating: "data: 0123456789\n", count: 10).utf8))
        }
    }
}
