import CurlewSerialization
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// Request serializers without I/O: where parameters go, default headers, credentials, timeouts,
/// and the errors that keep a bad request from being sent.
@Suite("Request serializers")
struct RequestSerializerTests {
    let url = URL(string: "http://127.0.0.1:8080/search")!

    func body(_ request: TransferRequest) -> String? {
        guard case .data(let data)? = request.body else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    @Test("GET, HEAD and DELETE put parameters in the query; other methods in a form body",
          arguments: [HTTPRequest.Method.get, .head, .delete, .post, .put, .patch])
    func placement(_ method: HTTPRequest.Method) throws {
        let request = try HTTPRequestSerializer().request(method: method, url: self.url, parameters: ["q": "a b", "page": 2])
        if [.get, .head, .delete].contains(method) {
            #expect(request.head.path == "/search?page=2&q=a%20b")
            #expect(request.body == nil)
            #expect(request.head.headerFields[.contentType] == nil)
        } else {
            #expect(request.head.path == "/search")
            #expect(self.body(request) == "page=2&q=a%20b")
            #expect(request.head.headerFields[.contentType] == "application/x-www-form-urlencoded")
        }
        #expect(request.head.method == method)
    }

    @Test("a query the URL already has is kept, the parameters follow after &")
    func existingQuery() throws {
        let url = URL(string: "http://127.0.0.1/search?lang=en")!
        let request = try HTTPRequestSerializer().request(method: .get, url: url, parameters: ["q": "x"])
        #expect(request.url?.absoluteString == "http://127.0.0.1/search?lang=en&q=x")
    }

    @Test("nil or empty parameters leave the URL alone")
    func noParameters() throws {
        let serializer = HTTPRequestSerializer()
        #expect(try serializer.request(method: .get, url: self.url).head.path == "/search")
        #expect(try serializer.request(method: .get, url: self.url, parameters: [:]).head.path == "/search")
        #expect(try serializer.request(method: .post, url: self.url).body == nil)
        #expect(try self.body(serializer.request(method: .post, url: self.url, parameters: [:])) == "")
    }

    @Test("methodsEncodingParametersInURI decides")
    func customURIMethods() throws {
        var serializer = HTTPRequestSerializer()
        serializer.methodsEncodingParametersInURI = [.get]
        let request = try serializer.request(method: .delete, url: self.url, parameters: ["id": 1])
        #expect(self.body(request) == "id=1")
    }

    @Test("JSON: a sorted JSON body with its content type; GET still uses the query")
    func json() throws {
        let serializer = JSONRequestSerializer()
        let post = try serializer.request(method: .post, url: self.url,
                                          parameters: ["name": "curlew", "tags": ["a", "b"], "n": nil, "x": 1.5, "url": "a/b"])
        #expect(self.body(post) == #"{"n":null,"name":"curlew","tags":["a","b"],"url":"a/b","x":1.5}"#)
        #expect(post.head.headerFields[.contentType] == "application/json")
        let get = try serializer.request(method: .get, url: self.url, parameters: ["q": "x"])
        #expect(get.head.path == "/search?q=x")
        #expect(get.body == nil)
        #expect(try serializer.request(method: .post, url: self.url).body == nil)
    }

    struct Item: Encodable, Sendable {
        var id: Int
        var ratio: Double
    }

    @Test("JSON: an Encodable value; a non-finite number is a typed error with its path")
    func jsonEncodable() throws {
        let serializer = JSONRequestSerializer()
        let request = try serializer.request(method: .put, url: self.url, parameters: Item(id: 3, ratio: 0.5))
        #expect(self.body(request) == #"{"id":3,"ratio":0.5}"#)
        #expect {
            try serializer.request(method: .post, url: self.url, parameters: ["a": ["b": .double(.infinity)]])
        } throws: { error in
            let error = error as? RequestSerializationError
            return error?.code == .invalidParameters && error?.codingPath == ["a", "b"]
        }
        #expect(throws: RequestSerializationError.self) {
            try serializer.request(method: .post, url: self.url, parameters: Item(id: 1, ratio: .nan))
        }
    }

    @Test("JSON: nesting deeper than the limit is an error, not a stack overflow")
    func jsonDeep() throws {
        var deep: ParameterValue = 1
        for _ in 0..<100_000 { deep = .array([deep]) }
        var parameters: Parameters = ["deep": deep]
        #expect(throws: RequestSerializationError.self) {
            try JSONRequestSerializer().request(method: .post, url: self.url, parameters: parameters)
        }
        parameters = [:]
        deep.tearDown()
    }

    @Test("property list: an XML plist body; null is refused")
    func propertyList() throws {
        let serializer = PropertyListRequestSerializer()
        let request = try serializer.request(method: .post, url: self.url, parameters: ["a": 1, "b": ["x", "y"]])
        #expect(request.head.headerFields[.contentType] == "application/x-plist")
        guard case .data(let body)? = request.body else {
            Issue.record("no body")
            return
        }
        let decoded = try PropertyListSerialization.propertyList(from: body, format: nil) as? [String: Any]
        #expect(decoded?["a"] as? Int == 1)
        #expect(decoded?["b"] as? [String] == ["x", "y"])
        #expect(self.body(request)?.hasPrefix("<?xml") == true)
        #expect {
            try serializer.request(method: .post, url: self.url, parameters: ["a": nil])
        } throws: { error in
            (error as? RequestSerializationError)?.codingPath == ["a"]
        }
    }

    @Test("default headers: Accept-Language and User-Agent")
    func standardHeaders() throws {
        let request = try HTTPRequestSerializer().request(method: .get, url: self.url)
        let agent = try #require(request.head.headerFields[.userAgent])
        #expect(agent.hasPrefix("Curlew/\(CurlewVersion.string) ("))
        #expect(agent.hasSuffix(")"))
        if !Locale.preferredLanguages.isEmpty {
            #expect(request.head.headerFields[.acceptLanguage]?.contains(";q=1") == true)
        }
    }

    @Test("Accept-Language: at most six languages, q falling by 0.1")
    func acceptLanguage() {
        #expect(StandardHeaders.acceptLanguage(["en-US", "de", "fr", "it", "es", "pt", "nl"])
            == "en-US;q=1, de;q=0.9, fr;q=0.8, it;q=0.7, es;q=0.6, pt;q=0.5")
        #expect(StandardHeaders.acceptLanguage([]) == nil)
        #expect(StandardHeaders.acceptLanguage(["bad\r\nvalue", "en"]) == "en;q=1")
    }

    @Test("the request's own headers and timeout win over the defaults")
    func existingWins() throws {
        var serializer = JSONRequestSerializer()
        try serializer.setValue("curlew-tests", forHeader: "User-Agent")
        try serializer.setValue("application/json", forHeader: "Accept")
        serializer.timeout = .seconds(5)
        var original = TransferRequest(url: self.url, method: .post)
        original.head.headerFields[.accept] = "text/plain"
        original.head.headerFields[.contentType] = "application/vnd.curlew+json"
        original.options.timeout = .seconds(1)
        let request = try serializer.serialize(original, parameters: ["a": 1, "b": "mixed"])
        #expect(request.head.headerFields[.accept] == "text/plain")
        #expect(request.head.headerFields[.userAgent] == "curlew-tests")
        #expect(request.head.headerFields[.contentType] == "application/vnd.curlew+json")
        #expect(request.options.timeout == .seconds(1))
        #expect(try serializer.request(method: .get, url: self.url).options.timeout == .seconds(5))
        #expect(try HTTPRequestSerializer().request(method: .get, url: self.url).options.timeout == nil)
    }

    @Test("Basic and bearer credentials, and clearing them")
    func credentials() throws {
        var serializer = HTTPRequestSerializer()
        try serializer.setAuthorization(username: "Aladdin", password: "open sesame")
        #expect(try serializer.request(method: .get, url: self.url).head.headerFields[.authorization]
            == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        try serializer.setBearerToken("abc.def")
        #expect(try serializer.request(method: .get, url: self.url).head.headerFields[.authorization] == "Bearer abc.def")
        serializer.clearAuthorization()
        #expect(try serializer.request(method: .get, url: self.url).head.headerFields[.authorization] == nil)
        #expect(throws: RequestSerializationError(.invalidHeaderValue, "A user name for Basic authentication cannot contain a colon.")) {
            try serializer.setAuthorization(username: "a:b", password: "c")
        }
        #expect(throws: RequestSerializationError.self) { try serializer.setBearerToken("") }
        #expect(throws: RequestSerializationError.self) { try serializer.setBearerToken("a\nb") }
    }

    @Test("header values with CR, LF or NUL and invalid names are typed errors; nothing is set",
          arguments: [("X-Note", "a\r\nInjected: 1", RequestSerializationError.Code.invalidHeaderValue),
                      ("X-Note", "a\nb", .invalidHeaderValue), ("X-Note", "a\0b", .invalidHeaderValue),
                      ("X-Note", " padded", .invalidHeaderValue), ("X-Note", "tab\u{1}", .invalidHeaderValue),
                      ("Bad Name", "v", .invalidHeaderName), ("", "v", .invalidHeaderName), ("X:Y", "v", .invalidHeaderName)])
    func invalidHeaders(_ name: String, _ value: String, _ code: RequestSerializationError.Code) {
        var serializer = HTTPRequestSerializer()
        let before = serializer.defaultHeaders
        #expect {
            try serializer.setValue(value, forHeader: name)
        } throws: { error in
            (error as? RequestSerializationError)?.code == code
        }
        #expect(serializer.defaultHeaders == before)
    }

    @Test("setValue(nil) removes a header")
    func removeHeader() throws {
        var serializer = HTTPRequestSerializer()
        try serializer.setValue(nil, forHeader: "User-Agent")
        #expect(try serializer.request(method: .get, url: self.url).head.headerFields[.userAgent] == nil)
    }

    @Test("a secret header is set and marked; every request lists its name; the name stays secret when the value changes")
    func secretHeader() throws {
        let name = try #require(HTTPField.Name("X-API-Key"))
        var serializer = JSONRequestSerializer()
        #expect(serializer.secretHeaderNames.isEmpty)
        #expect(try serializer.request(method: .get, url: self.url).options.secretHeaderNames.isEmpty)
        try serializer.setValue("k3y", forSecretHeader: "x-api-key")
        #expect(serializer.secretHeaderNames == [name] && serializer.http.secretHeaderNames == [name])
        for request in [try serializer.request(method: .post, url: self.url, parameters: ["a": 1]),
                        try serializer.multipartRequest(url: self.url, form: MultipartFormData())] {
            #expect(request.head.headerFields[name] == "k3y")
            #expect(request.options.secretHeaderNames == [name])
        }
        try serializer.setValue("n3w", forHeader: "X-API-Key")
        #expect(serializer.secretHeaderNames == [name])
        try serializer.setValue(nil, forSecretHeader: "X-API-Key")
        #expect(serializer.defaultHeaders[name] == nil && serializer.secretHeaderNames == [name])
        // A request's own names are kept beside the serializer's.
        var own = TransferRequest(url: self.url)
        own.options.secretHeaderNames = [.cookie]
        #expect(serializer.applyingDefaults(to: own).options.secretHeaderNames == [name, .cookie])
    }

    @Test("a secret header with an invalid name or value is a typed error; nothing is set or marked",
          arguments: [("X-Key", "a\r\nInjected: 1", RequestSerializationError.Code.invalidHeaderValue),
                      ("Bad Name", "v", .invalidHeaderName)])
    func invalidSecretHeader(_ name: String, _ value: String, _ code: RequestSerializationError.Code) {
        var serializer = PropertyListRequestSerializer()
        let before = serializer.defaultHeaders
        #expect {
            try serializer.setValue(value, forSecretHeader: name)
        } throws: { error in
            (error as? RequestSerializationError)?.code == code
        }
        #expect(serializer.defaultHeaders == before && serializer.secretHeaderNames.isEmpty)
    }
}
