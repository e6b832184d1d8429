import HTTPTypes
import Testing
@testable import CurlewTransport

@Suite("Known field names")
struct KnownFieldNamesTests {
    private static let spellings = [
        "Content-Length", "content-length", "CONTENT-LENGTH", "cOnTeNt-LeNgTh", "Date", "ETag", "etag", "Age", "Vary",
        "Server", "Connection", "Last-Modified", "Accept-Ranges", "Content-Type", "Set-Cookie", "Location",
        "Strict-Transport-Security", "Access-Control-Allow-Origin", "WWW-Authenticate", "Retry-After",
    ]

    private static let strangers = [
        "", "A", "Content-Lengt", "Content-Lengthh", "Content_Length", "Content-Lengtz", "Xontent-Length", "Dates",
        "Dat", "Datf", "X-Date", "Content\rLength", "Content-Length ", " Date", "Dat\u{E9}", "Accept-Rangez",
        "Cache-Controm", "Strict-Transport-Securitx", "Access-Control-Allow-Origim", "X-Custom",
    ]

    private func lookUp(_ spelling: String) -> KnownFieldNames.Known? {
        Array(spelling.utf8).withUnsafeBytes { KnownFieldNames.name(for: $0[...]) }
    }

    @Test("a known name in any letter case is the static name of that name", arguments: Self.spellings)
    func known(_ spelling: String) throws {
        let known = try #require(self.lookUp(spelling))
        #expect(known.name == HTTPField.Name(spelling))
    }

    @Test("anything else is not known", arguments: Self.strangers)
    func unknown(_ spelling: String) {
        #expect(self.lookUp(spelling) == nil)
    }

    @Test func rolesAreTheEngineReads() {
        #expect(self.lookUp("content-length")?.role == .contentLength)
        #expect(self.lookUp("Content-Encoding")?.role == .contentEncoding)
        #expect(self.lookUp("LOCATION")?.role == .location)
        #expect(self.lookUp("Content-Type")?.role == nil)
    }
}
