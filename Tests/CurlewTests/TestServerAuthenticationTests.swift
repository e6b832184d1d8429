import Foundation
import Testing
@testable import CurlewTestServer

/// The test server's MD5 and HTTP authentication checks, without I/O.
@Suite("Test server: HTTP authentication")
struct TestServerAuthenticationTests {
    @Test("MD5 matches RFC 1321's test suite", arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"),
    ])
    func md5(_ input: String, _ digest: String) {
        #expect(MD5.hex(input.utf8) == digest)
    }

    @Test("Basic accepts exactly user:password")
    func basic() {
        let good = "Basic " + Data("ada:s3cret".utf8).base64EncodedString()
        #expect(HTTPAuthentication.acceptsBasic(good, user: "ada", password: "s3cret"))
        #expect(!HTTPAuthentication.acceptsBasic(good, user: "ada", password: "other"))
        #expect(!HTTPAuthentication.acceptsBasic("Bearer x", user: "ada", password: "s3cret"))
        #expect(!HTTPAuthentication.acceptsBasic(nil, user: "ada", password: "s3cret"))
    }

    @Test("Digest accepts the right response hash for the challenge, method and URI")
    func digest() {
        let ha1 = MD5.hex("ada:\(HTTPAuthentication.realm):s3cret".utf8)
        let ha2 = MD5.hex("GET:/digest-auth/ada/s3cret".utf8)
        let response = MD5.hex("\(ha1):\(HTTPAuthentication.nonce):00000001:abcd:auth:\(ha2)".utf8)
        let header = "Digest username=\"ada\", realm=\"\(HTTPAuthentication.realm)\", nonce=\"\(HTTPAuthentication.nonce)\", "
            + "uri=\"/digest-auth/ada/s3cret\", cnonce=\"abcd\", nc=00000001, qop=auth, response=\"\(response)\", "
            + "opaque=\"\(HTTPAuthentication.opaque)\", algorithm=MD5"
        #expect(HTTPAuthentication.acceptsDigest(header, method: "GET", uri: "/digest-auth/ada/s3cret", user: "ada", password: "s3cret"))
        #expect(!HTTPAuthentication.acceptsDigest(header, method: "POST", uri: "/digest-auth/ada/s3cret", user: "ada", password: "s3cret"))
        #expect(!HTTPAuthentication.acceptsDigest(header, method: "GET", uri: "/digest-auth/ada/s3cret", user: "ada", password: "other"))
        #expect(!HTTPAuthentication.acceptsDigest(header.replacingOccurrences(of: "cnonce=\"abcd\"", with: "cnonce=\"abce\""),
                                                  method: "GET", uri: "/digest-auth/ada/s3cret", user: "ada", password: "s3cret"))
    }
}
