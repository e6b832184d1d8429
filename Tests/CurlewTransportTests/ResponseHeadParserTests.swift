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
    private func facts(_ lines: [String]) -> ResponseHeadParser.Facts? {
        var parser = ResponseHeadParser(limit: 4096)
        for line in lines { _ = Array(line.utf8).withUnsafeBytes { parser.consume($0) } }
        return parser.facts
    }

    @Test func noted() {
        let facts = self.facts(["HTTP/1.1 301 Moved\r\n", "content-length: 12\r\n", "Content-Encoding: gzip\r\n",
                                "LOCATION: /next\r\n", "\r\n"])
        #expect(facts == ResponseHeadParser.Facts(contentLength: 12, isContentEncoded: true, location: "/next"))
    }

    @Test("as a lookup in HTTPFields would answer: two lengths are no length, identity is no encoding")
    func likeALookup() {
        #expect(self.facts(["HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n", "Content-Length: 5\r\n", "\r\n"])?.contentLength == nil)
        #expect(self.facts(["HTTP/1.1 200 OK\r\n", "Content-Length: five\r\n", "\r\n"])?.contentLength == nil)
        #expect(self.facts(["HTTP/1.1 200 OK\r\n", "Content-Encoding: IDENTITY\r\n", "\r\n"])?.isContentEncoded == false)
        #expect(self.facts(["HTTP/1.1 302 Found\r\n", "Location: /a\r\n", "Location: /b\r\n", "\r\n"])?.location == "/a, /b")
    }

    @Test("a folded line leaves the facts to a lookup")
    func folded() {
        #expect(self.facts(["HTTP/1.1 302 Found\r\n", "Location: /a\r\n", " b\r\n", "\r\n"]) == nil)
    }

    @Test("the facts start over with each head")
    func perHead() {
        let facts = self.facts(["HTTP/1.1 100 Continue\r\n", "Content-Length: 1\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "\r\n"])
        #expect(facts == ResponseHeadParser.Facts())
    }
}
