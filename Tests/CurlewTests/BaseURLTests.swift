import Curlew
import CurlewTesting
import Foundation
import Testing

/// Base-URL resolution as `URL(string:relativeTo:)` with AFNetworking's trailing-slash rule. No I/O:
/// the managers run on a stub and send nothing.
@Suite("RequestOperationManager: base URL")
struct BaseURLTests {
    static func manager(_ base: String?) -> RequestOperationManager {
        RequestOperationManager(baseURL: base.flatMap { URL(string: $0) }, transport: StubTransport())
    }

    /// AFNetworking's documented table (with the real result for `foo/`, which its comment gets wrong).
    @Test("the documented table", arguments: [
        ("foo", "http://example.com/v1/foo"),
        ("foo?bar=baz", "http://example.com/v1/foo?bar=baz"),
        ("/foo", "http://example.com/foo"),
        ("foo/", "http://example.com/v1/foo/"),
        ("/foo/", "http://example.com/foo/"),
        ("http://example2.com/", "http://example2.com/"),
        ("https://other.example/x?y=1", "https://other.example/x?y=1"),
        ("//example2.com/x", "http://example2.com/x"),
        ("https://example.com/x", "https://example.com/x"),
        ("HTTP://EXAMPLE.com:80/x", "HTTP://EXAMPLE.com:80/x"),
        ("", "http://example.com/v1/"),
        ("../up", "http://example.com/up"),
    ])
    func table(_ path: String, _ expected: String) throws {
        let api = Self.manager("http://example.com/v1/")
        #expect(try api.url(for: path).absoluteString == expected)
        #expect(try api.request(.get, path).url?.absoluteString == expected)
    }

    @Test("a base URL with a path gets a trailing slash; one without a path does not need one")
    func trailingSlash() throws {
        #expect(Self.manager("http://example.com/v1").baseURL?.absoluteString == "http://example.com/v1/")
        #expect(try Self.manager("http://example.com/v1").url(for: "foo").absoluteString == "http://example.com/v1/foo")
        #expect(Self.manager("http://example.com/v1/").baseURL?.absoluteString == "http://example.com/v1/")
        #expect(Self.manager("http://example.com").baseURL?.absoluteString == "http://example.com")
        #expect(try Self.manager("http://example.com").url(for: "foo").absoluteString == "http://example.com/foo")
    }

    @Test("without a base URL only absolute URLs resolve; anything else is a typed badURL")
    func noBase() throws {
        let api = Self.manager(nil)
        #expect(try api.url(for: "https://example.com/a").absoluteString == "https://example.com/a")
        for path in ["relative/path", "/absolute/path", ""] {
            #expect(throws: TransferError.self) { try api.url(for: path) }
            do {
                _ = try api.request(.get, path)
                Issue.record("\(path) resolved")
            } catch let error as TransferError {
                #expect(error.code == .badURL)
            }
        }
    }

    @Test("a path that makes no URL fails the AFNetworking-style call with no operation, asynchronously")
    func unsentFailure() async throws {
        let api = Self.manager(nil)
        let probe = HandlerProbe()
        let operation = api.GET("no base", success: probe.success, failure: probe.failure)
        #expect(operation == nil)
        let record = await probe.waitForOneCall()
        #expect(record.failures == 1 && record.operationWasNil)
        #expect((record.error as? TransferError)?.code == .badURL)
    }
}
