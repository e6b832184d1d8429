import HTTPTypes
import Testing
@testable import CurlewTransport

@Suite("Response head parser")
struct ResponseHeadParserTests {
    private func feed(_ lines: [String], limit: Int = 4096) -> [ResponseHeadParser.Event] {
        var parser = ResponseHeadParser(limit: limit)
        return lines.map { line in
            Array(line.utf8).withUnsafeBytes { parser.consume($0) }
        }
    }

    @Test func http11Head() throws {
        let events = self.feed(["HTTP/1.1 404 Not Found\r\n", "Content-Length: 5\r\n", "X-A:  spaced  \r\n", "\r\n"])
        guard case .complete(let head) = events.last else {
            Issue.record("no head: \(events)")
            return
        }
        #expect(head.status.code == 404)
        #expect(head.status.reasonPhrase == "Not Found")
        #expect(head.headerFields[.contentLength] == "5")
        #expect(head.headerFields[try #require(HTTPField.Name("X-A"))] == "spaced")
    }

    @Test func http2HeadWithoutReason() {
        let events = self.feed(["HTTP/2 200 \r\n", "content-type: text/plain\r\n", "\r\n"])
        guard case .complete(let head) = events.last else {
            Issue.record("no head: \(events)")
            return
        }
        #expect(head.status.code == 200)
        #expect(head.headerFields[.contentType] == "text/plain")
    }

    @Test func informationalHeadIsSkipped() {
        let events = self.feed(["HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 201 Created\r\n", "\r\n"])
        #expect(events[1] == .informational)
        guard case .complete(let head) = events.last else {
            Issue.record("no head: \(events)")
            return
        }
        #expect(head.status.code == 201)
    }

    @Test func trailersAfterTheHeadAreIgnored() {
        let events = self.feed(["HTTP/1.1 200 OK\r\n", "\r\n", "X-Trailer: 1\r\n", "\r\n"])
        #expect(events[2] == .needMore)
        #expect(events[3] == .needMore)
    }

    @Test func foldedLineContinuesTheValue() throws {
        let events = self.feed(["HTTP/1.1 200 OK\r\n", "X-Long: one\r\n", "\t two\r\n", "\r\n"])
        guard case .complete(let head) = events.last else {
            Issue.record("no head: \(events)")
            return
        }
        #expect(head.headerFields[try #require(HTTPField.Name("X-Long"))] == "one two")
    }

    @Test("status lines that are not HTTP", arguments: ["ICY 200 OK\r\n", "HTTP/1.1 20\r\n", "HTTP/1.1 abc OK\r\n", "HTTP/1.1 200OK\r\n", "\r\n"])
    func malformedStatusLine(_ line: String) {
        #expect(self.feed([line]) == [.malformed])
    }

    @Test func invalidFieldNamesAreDropped() {
        let events = self.feed(["HTTP/1.1 200 OK\r\n", "Bad Name: x\r\n", ": empty\r\n", "NoColon\r\n", "\r\n"])
        guard case .complete(let head) = events.last else {
            Issue.record("no head: \(events)")
            return
        }
        #expect(head.headerFields.isEmpty)
    }

    @Test func headLargerThanTheLimit() {
        let events = self.feed(["HTTP/1.1 200 OK\r\n", "X-Big: " + String(repeating: "a", count: 100) + "\r\n"], limit: 64)
        #expect(events.last == .tooLarge)
    }

    @Test("known names are recognised in any case", arguments: ["content-length", "Content-Length", "CONTENT-LENGTH", "cOnTeNt-LeNgTh"])
    func knownNamesAnyCase(_ spelling: String) {
        let events = self.feed(["HTTP/1.1 200 OK\r\n", "\(spelling): 42\r\n", "X-Other: y\r\n", "\r\n"])
        guard case .complete(let head) = events.last else {
            Issue.record("no head: \(events)")
            return
        }
        #expect(head.headerFields[.contentLength] == "42")
        #expect(head.headerFields.count == 2)
    }

    @Test func namesThatMerelyLookKnownStayThemselves() throws {
        let events = self.feed(["HTTP/1.1 200 OK\r\n", "Content-Lengthy: 1\r\n", "Content-Lengt: 2\r\n", "\r\n"])
        guard case .complete(let head) = events.last else {
            Issue.record("no head: \(events)")
            return
        }
        #expect(head.headerFields[.contentLength] == nil)
        #expect(head.headerFields[try #require(HTTPField.Name("Content-Lengthy"))] == "1")
    }

    @Test("after a head curl may answer (a 401), a status line starts the next response; other lines stay trailers")
    func followingResponse() {
        var parser = ResponseHeadParser(limit: 4096)
        func feed(_ line: String) -> ResponseHeadParser.Event {
            Array(line.utf8).withUnsafeBytes { parser.consume($0) }
        }
        #expect(feed("HTTP/1.1 401 Unauthorized\r\n") == .needMore)
        #expect(feed("WWW-Authenticate: Digest realm=\"x\"\r\n") == .needMore)
        guard case .complete(let challenge) = feed("\r\n") else {
            Issue.record("the challenge head did not complete")
            return
        }
        #expect(challenge.status.code == 401)
        parser.acceptFollowingResponse()
        #expect(feed("X-Trailer: 1\r\n") == .needMore)
        #expect(feed("HTTP/1.1 200 OK\r\n") == .needMore)
        #expect(feed("Content-Length: 2\r\n") == .needMore)
        guard case .complete(let answer) = feed("\r\n") else {
            Issue.record("the answer head did not complete")
            return
        }
        #expect(answer.status.code == 200 && answer.headerFields[.contentLength] == "2")
        #expect(feed("HTTP/1.1 500 Late\r\n") == .needMore, "without acceptFollowingResponse, later lines are trailers")
    }
}

@Suite("Response head parser: the facts the engine reads")
struct ResponseHeadFactsTests {
    private func facts(_ lines: [String]) -> ResponseHeadParser.Facts {
        var parser = ResponseHeadParser(limit: 4096)
        for line in lines { _ = Array(line.utf8).withUnsafeBytes { parser.consume($0) } }
        return parser.facts
    }

    @Test func noted() {
        let facts = self.facts(["HTTP/1.1 301 Moved\r\n", "content-length: 12\r\n", "Content-Encoding: gzip\r\n",
                                "LOCATION: /next\r\n", "\r\n"])
        #expect(facts == ResponseHeadParser.Facts(contentLength: 12, isContentEncoded: true, location: "/next"))
    }

    @Test("identity is no encoding; two locations are joined as a lookup joins them")
    func likeALookup() {
        #expect(self.facts(["HTTP/1.1 200 OK\r\n", "Content-Encoding: IDENTITY\r\n", "\r\n"]).isContentEncoded == false)
        #expect(self.facts(["HTTP/1.1 302 Found\r\n", "Location: /a\r\n", "Location: /b\r\n", "\r\n"]).location == "/a, /b")
    }

    @Test("a folded line: the facts are noted again from the folded fields")
    func folded() {
        #expect(self.facts(["HTTP/1.1 302 Found\r\n", "Location: /a\r\n", " b\r\n", "\r\n"]).location == "/a b")
        let split = self.facts(["HTTP/1.1 200 OK\r\n", "Content-Length: 4\r\n", " 2\r\n", "\r\n"])
        #expect(split.contentLength == nil && split.framingError != nil, "a length folded into `4 2` is no length: \(split)")
    }

    @Test("the facts start over with each head")
    func perHead() {
        let facts = self.facts(["HTTP/1.1 100 Continue\r\n", "Content-Length: 1\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "\r\n"])
        #expect(facts == ResponseHeadParser.Facts())
    }
}

/// RFC 9112 §6.3: a final head whose body length is not one non-negative 64-bit decimal, or that has
/// `Content-Length` beside `Transfer-Encoding`, ends in `invalidFraming`, naming the field. curl 7.88
/// reads such heads its own way (the last of two lengths, the digits before junk, no length for an
/// overflow), which is how a client and an intermediary come to disagree on where a body ends.
@Suite("Response head parser: framing")
struct ResponseHeadFramingTests {
    private func end(_ fields: [String], status: String = "HTTP/1.1 200 OK") -> (ResponseHeadParser.Event, ResponseHeadParser.Facts) {
        var parser = ResponseHeadParser(limit: 4096)
        var last = ResponseHeadParser.Event.needMore
        for line in [status] + fields + [""] {
            last = Array((line + "\r\n").utf8).withUnsafeBytes { parser.consume($0) }
        }
        return (last, parser.facts)
    }

    @Test("valid lengths, repeated or listed with one value, are that value", arguments: [
        (["Content-Length: 42"], 42),
        (["Content-Length: 42", "Content-Length: 42"], 42),
        (["Content-Length: 42, 42"], 42),
        (["Content-Length: 42,42 , 042"], 42),
        (["content-length: 0"], 0),
        (["Content-Length: 9223372036854775807"], .max),
    ] as [([String], Int64)])
    func valid(_ fields: [String], _ length: Int64) {
        let (event, facts) = self.end(fields)
        guard case .complete = event else {
            Issue.record("\(fields): \(event)")
            return
        }
        #expect(facts.contentLength == length)
        #expect(facts.framingError == nil)
    }

    @Test("invalid lengths end the head in invalidFraming naming Content-Length", arguments: [
        ["Content-Length: 5", "Content-Length: 8"],
        ["Content-Length: 5, 8"],
        ["Content-Length: 8", "Content-Length: 8, 5"],
        ["Content-Length: 100000000000000000000000"],
        ["Content-Length: 9223372036854775808"],
        ["Content-Length: -1"],
        ["Content-Length: +1"],
        ["Content-Length: 12abc"],
        ["Content-Length: 0x10"],
        ["Content-Length:"],
        ["Content-Length: 4 2"],
        ["Content-Length: 42,"],
        ["Content-Length: ,42"],
        ["Content-Length: 42,,42"],
        ["Content-Length: 1.5"],
    ])
    func invalidLength(_ fields: [String]) {
        let (event, facts) = self.end(fields)
        guard case .invalidFraming(let reason) = event else {
            Issue.record("\(fields) passed: \(event)")
            return
        }
        #expect(reason.contains("Content-Length"), "\(reason)")
        #expect(facts.contentLength == nil)
    }

    @Test("Transfer-Encoding beside Content-Length, in either order, is invalid framing", arguments: [
        ["Transfer-Encoding: chunked", "Content-Length: 3"],
        ["Content-Length: 3", "Transfer-Encoding: chunked"],
        ["content-length: 3", "TRANSFER-ENCODING: gzip, chunked"],
    ])
    func transferEncodingBesideLength(_ fields: [String]) {
        let (event, _) = self.end(fields)
        guard case .invalidFraming(let reason) = event else {
            Issue.record("\(fields) passed: \(event)")
            return
        }
        #expect(reason.contains("Transfer-Encoding") && reason.contains("Content-Length"), "\(reason)")
    }

    @Test("Transfer-Encoding alone, or no framing field at all, is fine")
    func transferEncodingAlone() {
        if case .complete = self.end(["Transfer-Encoding: chunked"]).0 {} else { Issue.record("chunked alone was refused") }
        let (event, facts) = self.end([])
        if case .complete = event {} else { Issue.record("a head without framing fields was refused") }
        #expect(facts.contentLength == nil && facts.framingError == nil)
    }

    @Test("an informational head's fields do not count, and each final head is judged alone")
    func perHead() {
        var parser = ResponseHeadParser(limit: 4096)
        func feed(_ line: String) -> ResponseHeadParser.Event {
            Array((line + "\r\n").utf8).withUnsafeBytes { parser.consume($0) }
        }
        _ = feed("HTTP/1.1 100 Continue")
        _ = feed("Content-Length: 5")
        #expect(feed("") == .informational)
        _ = feed("HTTP/1.1 200 OK")
        _ = feed("Content-Length: 8")
        guard case .complete = feed("") else {
            Issue.record("a length after a 100 Continue's was refused")
            return
        }
        #expect(parser.facts.contentLength == 8)
    }

    @Test("the length parser is linear: a megabyte of digits is refused as an overflow, a megabyte of repeats accepted")
    func long() {
        #expect(ResponseHeadParser.contentLength(String(repeating: "9", count: 1 << 20)) == nil)
        let repeats = Array(repeating: "7", count: 100_000).joined(separator: ", ")
        #expect(ResponseHeadParser.contentLength(repeats) == 7)
    }
}
