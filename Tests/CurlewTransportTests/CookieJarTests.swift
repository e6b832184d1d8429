import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import CurlewTransport

@Suite("Cookie jar")
struct CookieJarTests {
    @Test("curl's cookie lines become HTTPCookies")
    func netscapeLines() throws {
        let session = try #require(CookieJar.cookie(fromNetscapeLine: "127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tabc"))
        #expect(session.domain == "127.0.0.1" && session.path == "/" && session.name == "session" && session.value == "abc")
        #expect(session.isSessionOnly && !session.isSecure && !session.isHTTPOnly)

        let domain = try #require(CookieJar.cookie(fromNetscapeLine: "#HttpOnly_example.com\tTRUE\t/app\tTRUE\t4102444800\tid\t42"))
        #expect(domain.domain == ".example.com" && domain.path == "/app")
        #expect(domain.isSecure && domain.isHTTPOnly && !domain.isSessionOnly)
        #expect(domain.expiresDate == Date(timeIntervalSince1970: 4_102_444_800))

        for line in ["", "# Netscape HTTP Cookie File", "a\tb\tc", "host\tFALSE\t/\tFALSE\tsoon\tn\tv"] {
            #expect(CookieJar.cookie(fromNetscapeLine: line) == nil, "\(line)")
        }
    }

    @Test("a new jar is empty; jars are equal only to themselves")
    func identity() {
        let jar = CookieJar()
        #expect(jar.cookies.isEmpty)
        #expect(jar == jar && jar != CookieJar())
        jar.removeAll()
        #expect(jar.description == "<CookieJar: 0 cookies>")
    }
}
