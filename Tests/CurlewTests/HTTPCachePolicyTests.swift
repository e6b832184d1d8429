import Foundation
import HTTPTypes
import Testing
@testable import Curlew

/// The cache's decisions as values: directives, freshness and age, what is stored, what answers a
/// request, what a 304 changes, what an unsafe request drops. No I/O; the clock is passed in.
@Suite("HTTP cache decisions")
struct HTTPCachePolicyTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    static let urlString = "https://example.com/items?page=2"

    static func request(_ fields: HTTPFields = [:], method: HTTPRequest.Method = .get) throws -> TransferRequest {
        TransferRequest(url: try #require(URL(string: Self.urlString)), method: method, headerFields: fields)
    }

    static func response(_ status: Int = 200, _ fields: HTTPFields, body: String = "body",
                         url: String = Self.urlString) throws -> TransferResponse {
        TransferResponse(head: HTTPResponse(status: .init(code: status), headerFields: fields), body: Data(body.utf8),
                         fileURL: nil, url: try #require(URL(string: url)), metrics: TransferMetrics())
    }

    /// The entry `fields` make for a plain GET, fetched at `t0` (request and response).
    static func entry(_ fields: HTTPFields, request: TransferRequest? = nil, at time: Date = Self.t0) throws -> CachedResponse {
        let request = try request ?? Self.request()
        let result = CacheStorability.entry(for: request, response: try Self.response(200, fields), requestTime: time, responseTime: time)
        return try result.get()
    }

    static func field(_ name: String) throws -> HTTPField.Name {
        try #require(HTTPField.Name(name))
    }

    // MARK: Cache-Control

    @Test("directives: case, quoted values and commas, duplicates, several fields")
    func directives() {
        let control = CacheControl(#"Max-Age=60, no-cache="Set-Cookie, X-Foo", PUBLIC, max-age=5, must-revalidate"#)
        #expect(control.maxAge == 60, "the first max-age counts")
        #expect(control.noCache && control.isPublic && control.mustRevalidate)
        #expect(!control.noStore && !control.isPrivate)
        let fields: HTTPFields = [.cacheControl: "private", .cacheControl: "s-maxage=600, min-fresh=\"30\", only-if-cached"]
        let combined = CacheControl(fields)
        #expect(combined.isPrivate && combined.hasSharedMaxAge && combined.onlyIfCached && combined.minFresh == 30)
        #expect(combined.maxAge == nil)
    }

    @Test("an unreadable max-age is 0, a huge one 2^31", arguments: [
        ("max-age=soon", 0), ("max-age", 0), ("max-age=-1", 0), ("max-age=1.5", 0),
        ("max-age=99999999999999999999", 1 << 31), ("max-age=000000000000042", 42),
    ])
    func deltaSeconds(_ value: String, _ expected: Int) {
        #expect(CacheControl(value).maxAge == expected)
    }

    // MARK: Freshness

    @Test("max-age: fresh until its age reaches it")
    func maxAge() throws {
        let entry = try Self.entry([.cacheControl: "max-age=60", .eTag: "\"a\""])
        #expect(CacheFreshness.lifetime(of: entry) == 60)
        #expect(CacheFreshness.currentAge(of: entry, now: Self.t0.addingTimeInterval(59)) == 59)
        let request = try Self.request()
        #expect(CacheLookup.decide(request, candidates: [entry], now: Self.t0.addingTimeInterval(59)) == .fresh(index: 0, age: 59))
        #expect(CacheLookup.decide(request, candidates: [entry], now: Self.t0.addingTimeInterval(61))
                == .revalidate(index: 0, conditions: [.ifNoneMatch: "\"a\""]))
    }

    @Test("Expires minus Date, in any HTTP date form; max-age wins; s-maxage is ignored")
    func expires() throws {
        let dated = try Self.entry([.date: "Tue, 14 Nov 2023 22:13:20 GMT", .expires: "Tuesday, 14-Nov-23 22:15:00 GMT"])
        #expect(CacheFreshness.lifetime(of: dated) == 100)
        let both = try Self.entry([.date: "Tue, 14 Nov 2023 22:13:20 GMT", .expires: "Tue Nov 14 22:15:00 2023",
                                   .cacheControl: "max-age=5"])
        #expect(CacheFreshness.lifetime(of: both) == 5)
        let invalid = try Self.entry([.expires: "0", .eTag: "\"x\""])
        #expect(CacheFreshness.lifetime(of: invalid) == 0, "an Expires that is not a date means already expired")
        let shared = try Self.entry([.cacheControl: "s-maxage=600", .eTag: "\"x\""])
        #expect(CacheFreshness.lifetime(of: shared) == 0)
    }

    @Test("age: Date in the past, Age, and the time the request took (RFC 9111 §4.2.3)")
    func age() throws {
        // The response arrived at t0 + 2 (sent at t0), dated 10 s before t0, with `Age: 30`.
        let request = try Self.request()
        let response = try Self.response(200, [.date: "Tue, 14 Nov 2023 22:13:10 GMT", .age: "30", .cacheControl: "max-age=60"])
        let entry = try CacheStorability.entry(for: request, response: response, requestTime: Self.t0,
                                               responseTime: Self.t0.addingTimeInterval(2)).get()
        // apparent age 12; corrected age value 30 + 2; plus 5 s resident.
        #expect(CacheFreshness.currentAge(of: entry, now: Self.t0.addingTimeInterval(7)) == 37)
        #expect(CacheLookup.decide(request, candidates: [entry], now: Self.t0.addingTimeInterval(7)) == .fresh(index: 0, age: 37))
        #expect(CacheLookup.decide(request, candidates: [entry], now: Self.t0.addingTimeInterval(31)) == .miss,
                "stale without a validator: fetched again")
    }

    // MARK: What is stored

    @Test("storable statuses; partial content, redirects and responses after a redirect are not")
    func statuses() throws {
        let request = try Self.request()
        for status in [200, 203, 204, 404, 405, 410, 414, 501] {
            #expect(CacheStorability.entry(for: request, response: try Self.response(status, [.cacheControl: "max-age=9"]),
                                           requestTime: Self.t0, responseTime: Self.t0).isStored, "\(status)")
        }
        for status in [201, 206, 301, 302, 304, 307, 308, 500, 503] {
            #expect(CacheStorability.entry(for: request, response: try Self.response(status, [.cacheControl: "max-age=9"]),
                                           requestTime: Self.t0, responseTime: Self.t0) == .failure(.status), "\(status)")
        }
        var redirected = try Self.response(200, [.cacheControl: "max-age=9"], url: "https://example.com/elsewhere")
        #expect(CacheStorability.entry(for: request, response: redirected, requestTime: Self.t0, responseTime: Self.t0)
                == .failure(.redirected))
        redirected = try Self.response(200, [.cacheControl: "max-age=9"])
        redirected.metrics.redirectCount = 1
        #expect(CacheStorability.entry(for: request, response: redirected, requestTime: Self.t0, responseTime: Self.t0)
                == .failure(.redirected))
    }

    @Test("no-store, Vary: * and Vary on secrets are refused; a response that could never be used is too")
    func refusals() throws {
        let request = try Self.request()
        func verdict(_ fields: HTTPFields) throws -> Result<CachedResponse, CacheStorability.Refusal> {
            CacheStorability.entry(for: request, response: try Self.response(200, fields), requestTime: Self.t0, responseTime: Self.t0)
        }
        #expect(try verdict([.cacheControl: "max-age=60, no-store"]) == .failure(.noStore))
        #expect(try verdict([.cacheControl: "max-age=60", .vary: "Accept, *"]) == .failure(.vary))
        #expect(try verdict([.cacheControl: "max-age=60", .vary: "cookie"]) == .failure(.vary))
        #expect(try verdict([.cacheControl: "max-age=60", .vary: "Accept", .vary: "Authorization"]) == .failure(.vary))
        #expect(try verdict([:]) == .failure(.unusable))
        #expect(try verdict([.cacheControl: "no-cache"]) == .failure(.unusable))
        #expect(try verdict([.cacheControl: "no-cache", .eTag: "\"v\""]).isStored, "no-cache with a validator: revalidated each time")
        #expect(try verdict([.lastModified: "Tue, 14 Nov 2023 22:13:20 GMT"]).isStored)
        #expect(try verdict([.cacheControl: "private, max-age=60"]).isStored, "a private cache stores private responses")
    }

    @Test("requests the cache stays out of", arguments: [
        ("POST", ""), ("GET", "cache-control: no-store"), ("GET", "range: bytes=0-9"), ("GET", "if-none-match: \"a\""),
        ("GET", "if-modified-since: Tue, 14 Nov 2023 22:13:20 GMT"), ("HEAD", ""),
    ])
    func ineligible(_ method: String, _ field: String) throws {
        var fields = HTTPFields()
        if let colon = field.firstIndex(of: ":") {
            fields[try #require(HTTPField.Name(String(field[..<colon])))] = String(field[field.index(colon, offsetBy: 2)...])
        }
        let request = try Self.request(fields, method: try #require(HTTPRequest.Method(method)))
        #expect(!CacheEligibility.isEligible(request))
        #expect(CacheLookup.decide(request, candidates: [], now: Self.t0) == .bypass)
        #expect(CacheStorability.entry(for: request, response: try Self.response(200, [.cacheControl: "max-age=9"]),
                                       requestTime: Self.t0, responseTime: Self.t0) == .failure(.ineligibleRequest))
    }

    @Test("a body to a file or a request body keeps the cache out")
    func destinations() throws {
        var file = try Self.request()
        file.destination = .file(URL(fileURLWithPath: "/tmp/x"))
        #expect(!CacheEligibility.isEligible(file))
        var withBody = try Self.request()
        withBody.body = .data(Data("x".utf8))
        #expect(!CacheEligibility.isEligible(withBody))
    }

    @Test("credentials: stored only when the response says public, s-maxage or must-revalidate (RFC 9111 §3.5)")
    func authorization() throws {
        let authorized = try Self.request([.authorization: "Bearer secret"])
        func stored(_ request: TransferRequest, _ control: String) throws -> Bool {
            CacheStorability.entry(for: request, response: try Self.response(200, [.cacheControl: control]),
                                   requestTime: Self.t0, responseTime: Self.t0).isStored
        }
        #expect(try !stored(authorized, "max-age=60"))
        #expect(try !stored(authorized, "private, max-age=60"))
        #expect(try stored(authorized, "public, max-age=60"))
        #expect(try stored(authorized, "s-maxage=60, max-age=60"))
        #expect(try stored(authorized, "must-revalidate, max-age=60"))
        var withCredentials = try Self.request()
        withCredentials.options.credentials = TransferCredentials(user: "u", password: "p")
        #expect(try !stored(withCredentials, "max-age=60"), "curl's own Authorization counts too")
    }

    @Test("Set-Cookie and connection fields are not stored")
    func unstoredFields() throws {
        let entry = try Self.entry([.cacheControl: "max-age=60", .setCookie: "session=secret", .connection: "close",
                                    try Self.field("x-kept"): "1"])
        #expect(entry.head.headerFields[.setCookie] == nil && entry.head.headerFields[.connection] == nil)
        #expect(entry.head.headerFields[try Self.field("x-kept")] == "1")
    }

    // MARK: What answers a request

    @Test("the request's no-cache, max-age=0 and a max-age below the age make a fresh entry revalidate")
    func requestDirectives() throws {
        let entry = try Self.entry([.cacheControl: "max-age=600", .lastModified: "Tue, 14 Nov 2023 22:13:20 GMT"])
        let later = Self.t0.addingTimeInterval(20)
        let conditions: HTTPFields = [.ifModifiedSince: "Tue, 14 Nov 2023 22:13:20 GMT"]
        for control in ["no-cache", "max-age=0", "max-age=10", "min-fresh=590"] {
            #expect(CacheLookup.decide(try Self.request([.cacheControl: control]), candidates: [entry], now: later)
                    == .revalidate(index: 0, conditions: conditions), "\(control)")
        }
        for control in ["max-age=30", "min-fresh=500"] {
            #expect(CacheLookup.decide(try Self.request([.cacheControl: control]), candidates: [entry], now: later)
                    == .fresh(index: 0, age: 20), "\(control)")
        }
    }

    @Test("a response's no-cache makes it revalidate every time, with both validators")
    func responseNoCache() throws {
        let entry = try Self.entry([.cacheControl: "no-cache, max-age=600", .eTag: "W/\"w\"",
                                    .lastModified: "Tue, 14 Nov 2023 22:13:20 GMT"])
        #expect(CacheLookup.decide(try Self.request(), candidates: [entry], now: Self.t0)
                == .revalidate(index: 0, conditions: [.ifNoneMatch: "W/\"w\"", .ifModifiedSince: "Tue, 14 Nov 2023 22:13:20 GMT"]))
    }

    @Test("only-if-cached: a fresh entry answers, anything else is a 504 without a request")
    func onlyIfCached() throws {
        let request = try Self.request([.cacheControl: "only-if-cached"])
        let entry = try Self.entry([.cacheControl: "max-age=60", .eTag: "\"a\""])
        #expect(CacheLookup.decide(request, candidates: [entry], now: Self.t0) == .fresh(index: 0, age: 0))
        #expect(CacheLookup.decide(request, candidates: [entry], now: Self.t0.addingTimeInterval(61)) == .unsatisfiable)
        #expect(CacheLookup.decide(request, candidates: [], now: Self.t0) == .unsatisfiable)
    }

    @Test("Vary: an entry answers only requests with its varying values; the newest match wins")
    func vary() throws {
        let json = try Self.request([.accept: "application/json"])
        let xml = try Self.request([.accept: "application/xml"])
        let fields: HTTPFields = [.cacheControl: "max-age=60", .vary: "Accept"]
        let forJSON = try Self.entry(fields, request: json)
        let newerForJSON = try Self.entry(fields, request: json, at: Self.t0.addingTimeInterval(1))
        let forXML = try Self.entry(fields, request: xml)
        #expect(forJSON.varying == [.init(name: "accept", value: "application/json")])
        let now = Self.t0.addingTimeInterval(2)
        #expect(CacheLookup.decide(xml, candidates: [forJSON, forXML], now: now) == .fresh(index: 1, age: 2))
        #expect(CacheLookup.decide(json, candidates: [forJSON, newerForJSON, forXML], now: now) == .fresh(index: 1, age: 1))
        #expect(CacheLookup.decide(try Self.request(), candidates: [forJSON, forXML], now: now) == .miss,
                "no Accept: neither entry")
        let noAccept = try Self.entry(fields)
        #expect(noAccept.varying == [.init(name: "accept", value: nil)])
        #expect(CacheLookup.decide(try Self.request(), candidates: [forJSON, noAccept], now: now) == .fresh(index: 1, age: 2))
    }

    @Test("a body curl decoded answers only requests that let curl decode, and the reverse")
    func bodyCoding() throws {
        let fields: HTTPFields = [.cacheControl: "max-age=60", .contentEncoding: "gzip"]
        let decoding = try Self.request()
        let raw = try Self.request([.acceptEncoding: "gzip"])
        let decoded = try Self.entry(fields, request: decoding)
        let encoded = try Self.entry(fields, request: raw)
        #expect(decoded.bodyCoding == .decoded && encoded.bodyCoding == .encoded)
        #expect(CacheLookup.decide(raw, candidates: [decoded], now: Self.t0) == .miss)
        #expect(CacheLookup.decide(decoding, candidates: [encoded], now: Self.t0) == .miss)
        #expect(CacheLookup.decide(raw, candidates: [encoded], now: Self.t0) == .fresh(index: 0, age: 0))
        var noDecompression = try Self.request()
        noDecompression.options.automaticDecompression = false
        #expect(CacheLookup.decide(noDecompression, candidates: [decoded], now: Self.t0) == .miss)
        #expect(try Self.entry([.cacheControl: "max-age=60"], request: raw).bodyCoding == .identity)
    }

    @Test("keys: origin and target, scheme and host case-insensitive; another origin never matches")
    func keys() throws {
        let url = try #require(URL(string: "HTTPS://Example.COM/items?page=2"))
        #expect(CacheKey.key(for: url) == "https://example.com/items?page=2")
        for other in ["http://example.com/items?page=2", "https://example.com:8443/items?page=2",
                      "https://other.example/items?page=2", "https://example.com/Items?page=2"] {
            #expect(CacheKey.key(for: try #require(URL(string: other))) != CacheKey.key(for: url), "\(other)")
        }
    }

    // MARK: 304

    @Test("a 304 updates the stored fields, except the body's framing and coding; Date and Age are the 304's")
    func notModified() throws {
        let number = try Self.field("x-request-number")
        let stored = HTTPResponse(status: .ok, headerFields: [
            .cacheControl: "max-age=0", .eTag: "\"a\"", .contentLength: "4", .contentEncoding: "gzip",
            .date: "Tue, 14 Nov 2023 22:13:20 GMT", .age: "5", number: "1", .contentType: "text/plain",
        ])
        let reply = HTTPResponse(status: .notModified, headerFields: [
            .cacheControl: "max-age=60", .eTag: "\"a\"", .contentLength: "0", .contentEncoding: "br", number: "2",
            .setCookie: "s=1",
        ])
        let updated = try #require(CacheValidation.updated(stored, with: reply))
        #expect(updated.status == .ok)
        #expect(updated.headerFields[.cacheControl] == "max-age=60" && updated.headerFields[number] == "2")
        #expect(updated.headerFields[.contentLength] == "4" && updated.headerFields[.contentEncoding] == "gzip")
        #expect(updated.headerFields[.contentType] == "text/plain")
        #expect(updated.headerFields[.date] == nil && updated.headerFields[.age] == nil && updated.headerFields[.setCookie] == nil)
        #expect(updated.headerFields[values: .cacheControl].count == 1)
    }

    @Test("a 304 with another strong ETag is not about the stored response")
    func notModifiedMismatch() {
        let stored = HTTPResponse(status: .ok, headerFields: [.eTag: "\"a\""])
        #expect(CacheValidation.updated(stored, with: HTTPResponse(status: .notModified, headerFields: [.eTag: "\"b\""])) == nil)
        #expect(CacheValidation.updated(stored, with: HTTPResponse(status: .notModified, headerFields: [.eTag: "W/\"b\""])) != nil)
        #expect(CacheValidation.updated(stored, with: HTTPResponse(status: .notModified)) != nil)
    }

    // MARK: Invalidation

    @Test("unsafe methods drop their URL, and Location / Content-Location of the same origin")
    func invalidation() throws {
        let post = try Self.request(method: .post)
        let key = "https://example.com/items?page=2"
        let created = try Self.response(201, [.location: "/items/7", .contentLocation: "https://other.example/items/7"])
        #expect(CacheInvalidation.keys(for: post, result: .success(created)) == [key, "https://example.com/items/7"])
        #expect(CacheInvalidation.keys(for: post, result: .success(try Self.response(404, [:]))) == [])
        #expect(CacheInvalidation.keys(for: post, result: .failure(TransferError(.timedOut, "x"))) == [key])
        for method in [HTTPRequest.Method.put, .patch, .delete] {
            #expect(CacheInvalidation.keys(for: try Self.request(method: method), result: .success(try Self.response(204, [:])))
                    == [key])
        }
        for method in [HTTPRequest.Method.get, .head, .options, .trace] {
            #expect(CacheInvalidation.keys(for: try Self.request(method: method), result: .success(created)) == [])
        }
    }
}

extension Result where Success == CachedResponse, Failure == CacheStorability.Refusal {
    /// Whether the response is stored.
    var isStored: Bool {
        if case .success = self { return true }
        return false
    }
}
