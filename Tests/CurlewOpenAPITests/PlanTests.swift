import CurlewTransport
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

@testable import CurlewOpenAPI

/// The transport's decisions, as values: where a request goes, how its body is sent, whether a
/// response has a body and how long it is.
@Suite("OpenAPI transport: decisions")
struct PlanTests {
    // MARK: URLs

    @Test("the operation's path follows the server URL's path, without a doubled slash", arguments: [
        ("http://127.0.0.1:8080", "/json", "http://127.0.0.1:8080/json"),
        ("http://127.0.0.1:8080/", "/json", "http://127.0.0.1:8080/json"),
        ("https://example.com/api/v1", "/users/7?page=2", "https://example.com/api/v1/users/7?page=2"),
        ("https://example.com/api/v1/", "/users/7", "https://example.com/api/v1/users/7"),
        ("https://example.com/api?key=1", "/users", "https://example.com/api/users"),
        ("https://example.com/api", "/a%20b%2Fc/%C3%A7?q=x%26y&tag=1&tag=2", "https://example.com/api/a%20b%2Fc/%C3%A7?q=x%26y&tag=1&tag=2"),
        ("http://127.0.0.1:8080", "//evil.example/x", "http://127.0.0.1:8080//evil.example/x"),
        ("http://127.0.0.1:8080/api", "//evil.example/x", "http://127.0.0.1:8080/api//evil.example/x"),
        ("http://127.0.0.1:8080", "/a b", "http://127.0.0.1:8080/a%20b"),
        ("http://127.0.0.1:8080", "users", "http://127.0.0.1:8080/users"),
        ("http://user:secret@127.0.0.1:8080/", "/json", "http://user:secret@127.0.0.1:8080/json"),
    ])
    func url(_ base: String, _ path: String, _ expected: String) throws {
        let url = try OperationURL.url(base: try #require(URL(string: base)), path: path)
        #expect(url.absoluteString == expected)
    }

    @Test("a server URL without a scheme or host is a bad URL", arguments: [
        ("/", "/json"),
        ("file:///tmp", "/json"),
        ("127.0.0.1", "/json"),
    ])
    func badURL(_ base: String, _ path: String) throws {
        let baseURL = try #require(URL(string: base))
        #expect(throws: TransferError.self) { try OperationURL.url(base: baseURL, path: path) }
        do {
            _ = try OperationURL.url(base: baseURL, path: path)
        } catch {
            #expect(error.code == .badURL)
        }
    }

    // MARK: Request bodies

    @Test("known small bodies are collected; large or unknown ones are streamed")
    func requestBodies() {
        let limit: Int64 = 1 << 20
        #expect(RequestBodyPlan(length: .known(0), collectingUpTo: limit) == .collect(length: 0))
        #expect(RequestBodyPlan(length: .known(limit), collectingUpTo: limit) == .collect(length: limit))
        #expect(RequestBodyPlan(length: .known(limit + 1), collectingUpTo: limit) == .stream(length: limit + 1))
        #expect(RequestBodyPlan(length: .unknown, collectingUpTo: limit) == .stream(length: nil))
        #expect(RequestBodyPlan(length: .known(-1), collectingUpTo: limit) == .stream(length: nil))
        #expect(RequestBodyPlan(length: .known(1), collectingUpTo: 0) == .stream(length: 1))
    }

    // MARK: Response bodies

    @Test("HEAD, 204 and 304 have no body, whatever their fields say")
    func noBody() {
        var fields = HTTPFields()
        fields[.contentLength] = "10"
        #expect(ResponseBodyPlan(method: .head, response: HTTPResponse(status: .ok, headerFields: fields)) == .none)
        #expect(ResponseBodyPlan(method: .get, response: HTTPResponse(status: .noContent)) == .none)
        #expect(ResponseBodyPlan(method: .get, response: HTTPResponse(status: .notModified, headerFields: fields)) == .none)
        #expect(ResponseBodyPlan(method: .get, response: HTTPResponse(status: .resetContent)) == .stream(length: .unknown))
    }

    @Test("the length is Content-Length when it is one plain number and the body is not content-coded", arguments: [
        ([("Content-Length", "10")], HTTPBody.Length.known(10)),
        ([("Content-Length", "0")], .known(0)),
        ([("Content-Length", "10"), ("Content-Length", "10")], .known(10)),
        ([("Content-Length", "10"), ("Content-Encoding", "identity")], .known(10)),
        ([], .unknown),
        ([("Content-Length", "10"), ("Content-Length", "11")], .unknown),
        ([("Content-Length", "-1")], .unknown),
        ([("Content-Length", "+1")], .unknown),
        ([("Content-Length", "1 0")], .unknown),
        ([("Content-Length", "99999999999999999999")], .unknown),
        ([("Content-Length", "10"), ("Content-Encoding", "gzip")], .unknown),
        ([("Content-Length", "10"), ("Content-Encoding", "identity, br")], .unknown),
    ])
    func length(_ fields: [(String, String)], _ expected: HTTPBody.Length) throws {
        var headerFields = HTTPFields()
        for (name, value) in fields {
            headerFields.append(HTTPField(name: try #require(HTTPField.Name(name)), value: value))
        }
        #expect(ResponseBodyPlan(method: .get, response: HTTPResponse(status: .ok, headerFields: headerFields)) == .stream(length: expected))
    }
}
