import HTTPTypes
import Testing
@testable import CurlewTransport

@Suite("Resume planner")
struct ResumePlannerTests {
    private let tagged = ResumeValidator(entityTag: "\"v1\"", lastModified: nil)

    private func head(_ status: Int, _ fields: HTTPFields) -> HTTPResponse {
        HTTPResponse(status: .init(code: status), headerFields: fields)
    }

    @Test func sameEntityFromTheRightOffsetAppends() {
        let reply = self.head(206, [.eTag: "\"v1\"", .contentRange: "bytes 100-199/200"])
        #expect(ResumePlanner.decide(reply, for: ResumeRequest(offset: 100, validator: self.tagged)) == .append)
    }

    @Test func wrongOffsetRetriesWithoutRange() {
        let reply = self.head(206, [.eTag: "\"v1\"", .contentRange: "bytes 50-199/200"])
        #expect(ResumePlanner.decide(reply, for: ResumeRequest(offset: 100, validator: self.tagged)) == .retryWithoutRange)
    }

    @Test func anotherEntitysPartialRetriesWithoutRange() {
        let reply = self.head(206, [.eTag: "\"v2\"", .contentRange: "bytes 100-199/200"])
        #expect(ResumePlanner.decide(reply, for: ResumeRequest(offset: 100, validator: self.tagged)) == .retryWithoutRange)
    }

    @Test func fullReplyForTheSameEntitySkipsWhatIsKept() {
        let reply = self.head(200, [.eTag: "\"v1\""])
        #expect(ResumePlanner.decide(reply, for: ResumeRequest(offset: 100, validator: self.tagged)) == .skip(100))
    }

    @Test func fullReplyForAnotherEntityRestarts() {
        let reply = self.head(200, [.eTag: "\"v2\""])
        #expect(ResumePlanner.decide(reply, for: ResumeRequest(offset: 100, validator: self.tagged)) == .restart)
    }

    @Test func unsatisfiableRangeRetriesWithoutRange() {
        #expect(ResumePlanner.decide(self.head(416, [:]), for: ResumeRequest(offset: 100, validator: self.tagged)) == .retryWithoutRange)
    }

    @Test func dateValidatorWorksWithoutETag() {
        let dated = ResumeValidator(entityTag: nil, lastModified: "Sat, 21 Nov 2026 10:00:00 GMT")
        let reply = self.head(206, [.lastModified: "Sat, 21 Nov 2026 10:00:00 GMT", .contentRange: "bytes 10-19/20"])
        #expect(ResumePlanner.decide(reply, for: ResumeRequest(offset: 10, validator: dated)) == .append)
    }

    @Test("no validator for these first responses", arguments: [
        HTTPFields([HTTPField(name: .eTag, value: "W/\"weak\"")]),
        HTTPFields([HTTPField(name: .eTag, value: "\"v1\""), HTTPField(name: .acceptRanges, value: "none")]),
        HTTPFields([HTTPField(name: .eTag, value: "\"v1\""), HTTPField(name: .contentEncoding, value: "gzip")]),
        HTTPFields(),
    ])
    func noValidator(_ fields: HTTPFields) {
        #expect(ResumeValidator(self.head(200, fields)) == nil)
    }

    @Test func strongTagIsPreferredForIfRange() throws {
        let validator = try #require(ResumeValidator(self.head(200, [.eTag: "\"v1\"", .lastModified: "Sat, 21 Nov 2026 10:00:00 GMT"])))
        #expect(validator.ifRange == "\"v1\"")
    }

    @Test("Content-Range start", arguments: [("bytes 0-9/10", Int64(0)), ("bytes 100-199/*", 100), (" bytes 7-8/9", 7)])
    func contentRangeStart(_ value: String, _ start: Int64) {
        #expect(ResumePlanner.contentRangeStart(value) == start)
    }

    @Test("Content-Range values that are not byte ranges", arguments: ["items 0-9/10", "bytes */10", "bytes x-9/10", ""])
    func invalidContentRange(_ value: String) {
        #expect(ResumePlanner.contentRangeStart(value) == nil)
    }
}

extension ResumeValidator {
    init(entityTag: String?, lastModified: String?) {
        self.init(HTTPResponse(status: .ok, headerFields: HTTPFields(
            [entityTag.map { HTTPField(name: .eTag, value: $0) }, lastModified.map { HTTPField(name: .lastModified, value: $0) }]
                .compactMap { $0 })))!
    }
}
