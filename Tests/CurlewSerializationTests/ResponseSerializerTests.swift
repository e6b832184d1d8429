import CurlewSerialization
import Foundation
import HTTPTypes
import Testing

/// Response serializers without I/O: validation, every serializer's decoding, and bad input —
/// malformed documents, wrong charsets, huge numbers, deep nesting, empty and large bodies.
@Suite("Response serializers")
struct ResponseSerializerTests {
    static let url = URL(string: "http://127.0.0.1/x")

    static func head(_ status: Int = 200, _ contentType: String? = nil) -> HTTPResponse {
        var head = HTTPResponse(status: .init(code: status))
        if let contentType { head.headerFields[.contentType] = contentType }
        return head
    }

    static func reason(of error: any Error) -> ResponseSerializationError.Reason? {
        (error as? ResponseSerializationError)?.reason
    }

    // MARK: Validation

    @Test("validation: status first, then content type; an empty body is never refused for its type")
    func validation() throws {
        var serializer = HTTPResponseSerializer()
        serializer.acceptableContentTypes = ["application/json"]
        let body = Data("x".utf8)
        #expect(try serializer.serialize(response: Self.head(200, "application/json; charset=utf-8"), body: body, url: Self.url) == body)
        #expect(try serializer.serialize(response: Self.head(200, "Application/JSON"), body: body, url: Self.url) == body)
        #expect {
            try serializer.serialize(response: Self.head(404, "text/html"), body: body, url: Self.url)
        } throws: { error in
            guard case .unacceptableStatusCode(404) = Self.reason(of: error) else { return false }
            return (error as? ResponseSerializationError)?.body == body
        }
        #expect {
            try serializer.serialize(response: Self.head(200, "text/html"), body: body, url: Self.url)
        } throws: { error in
            guard case .unacceptableContentType("text/html") = Self.reason(of: error) else { return false }
            return true
        }
        #expect {
            try serializer.serialize(response: Self.head(200), body: body, url: Self.url)
        } throws: { error in
            guard case .unacceptableContentType(nil) = Self.reason(of: error) else { return false }
            return true
        }
        #expect(try serializer.serialize(response: Self.head(200, "text/html"), body: Data(), url: Self.url) == Data())
        #expect(try serializer.serialize(response: Self.head(204), body: nil, url: Self.url) == nil)
        serializer.acceptableStatusCodes = IndexSet([200, 404])
        #expect(try serializer.serialize(response: Self.head(404, "application/json"), body: body, url: Self.url) == body)
    }

    @Test("the data serializer validates nothing")
    func data() {
        #expect(DataResponseSerializer().serialize(response: Self.head(500), body: Data("e".utf8), url: nil) == Data("e".utf8))
    }

    @Test("the error's description caps the body")
    func description() {
        let body = Data(repeating: UInt8(ascii: "a"), count: 10_000)
        let error = ResponseSerializationError(.unacceptableStatusCode(500), response: Self.head(500), body: body, url: Self.url)
        #expect(error.description.count < 800)
        #expect(error.description.contains("HTTP 500 http://127.0.0.1/x, 10000 body bytes"))
        #expect(error.description.hasSuffix("…"))
    }

    // MARK: String

    @Test("strings: charset from Content-Type, configurable fallback", arguments: [
        ("text/plain; charset=utf-8", [0xC3, 0xA9] as [UInt8], "é"),
        ("text/plain; charset=ISO-8859-1", [0xE9], "é"),
        ("text/plain; charset=\"windows-1252\"", [0x80], "€"),
        ("text/plain; charset=utf-16le", [0xE9, 0x00], "é"),
        ("text/plain", [0x68, 0x69], "hi"),
        ("text/plain; charset=x-unknown", [0x68, 0x69], "hi"),
    ])
    func string(_ contentType: String, _ bytes: [UInt8], _ expected: String) throws {
        #expect(try StringResponseSerializer().serialize(response: Self.head(200, contentType), body: Data(bytes), url: nil) == expected)
    }

    @Test("strings: bytes invalid in the charset fail; the fallback applies without a charset; empty is \"\"")
    func stringErrors() throws {
        #expect {
            try StringResponseSerializer().serialize(response: Self.head(200, "text/plain; charset=utf-8"), body: Data([0xE9]), url: nil)
        } throws: { error in
            guard case .decodingFailed(let underlying, _) = Self.reason(of: error) else { return false }
            return underlying is CharsetMismatch
        }
        let latin1 = StringResponseSerializer(fallbackEncoding: .isoLatin1)
        #expect(try latin1.serialize(response: Self.head(200, "text/plain"), body: Data([0xE9]), url: nil) == "é")
        #expect(try StringResponseSerializer().serialize(response: Self.head(200), body: Data(), url: nil) == "")
    }

    // MARK: JSON

    @Test("JSON: objects, numbers, Booleans, null, fragments")
    func json() throws {
        let body = Data(#"{"a":[1,2.5,true,false,null,"s"],"b":{"c":-3},"big":12345678901234567890123,"e":1e3}"#.utf8)
        let value = try JSONResponseSerializer().serialize(response: Self.head(200, "application/json"), body: body, url: nil)
        #expect(value["a"] == [1, 2.5, true, false, nil, "s"])
        #expect(value["b"]?["c"]?.intValue == -3)
        #expect(value["big"]?.doubleValue == 12345678901234567890123.0)
        #expect(value["e"]?.doubleValue == 1000)
        #expect(value["a"]?[2]?.boolValue == true)
        #expect(value["a"]?[0]?.boolValue == nil, "1 is a number, not true")
        #expect(try JSONResponseSerializer().serialize(response: Self.head(200, "text/json"), body: Data(#""x""#.utf8), url: nil) == "x")
    }

    @Test("JSON: removesKeysWithNullValues works at every depth, keeps null array elements")
    func removesNulls() throws {
        let body = Data(#"{"a":null,"b":{"c":null,"d":1},"e":[{"f":null},null]}"#.utf8)
        let serializer = JSONResponseSerializer(removesKeysWithNullValues: true)
        let value = try serializer.serialize(response: Self.head(200, "application/json"), body: body, url: nil)
        #expect(value == ["b": ["d": 1], "e": [[:], nil]])
    }

    @Test("JSON: empty bodies are null for 204, 205 and HEAD, an error otherwise")
    func jsonEmpty() throws {
        let serializer = JSONResponseSerializer()
        #expect(try serializer.serialize(response: Self.head(204), body: nil, url: nil) == .null)
        #expect(try serializer.serialize(response: Self.head(205), body: Data(), url: nil) == .null)
        #expect(try serializer.serialize(response: Self.head(200, "application/json"), body: Data(" \n".utf8), url: nil,
                                         requestMethod: .head) == .null)
        #expect {
            try serializer.serialize(response: Self.head(200, "application/json"), body: Data(), url: nil)
        } throws: { error in
            guard case .emptyBody = Self.reason(of: error) else { return false }
            return true
        }
    }

    @Test("JSON: a status error still carries the parsed error document")
    func jsonErrorBody() throws {
        let body = Data(#"{"error":"not found"}"#.utf8)
        #expect {
            try JSONResponseSerializer().serialize(response: Self.head(404, "application/json"), body: body, url: Self.url)
        } throws: { error in
            let error = error as? ResponseSerializationError
            return (error?.parsedBody as? JSONValue)?["error"] == "not found" && error?.body == body
        }
        #expect {
            try JSONResponseSerializer().serialize(response: Self.head(500, "text/html"), body: Data("<html>".utf8), url: nil)
        } throws: { error in
            (error as? ResponseSerializationError)?.parsedBody == nil
        }
    }

    @Test("malformed JSON is a decoding error", arguments: [
        "{", "{\"a\" 1}", "nul", "\"unterminated", "{\"a\":1}}", "1e400", "-1e400", "[\"\\uD800\"]x",
    ])
    func malformedJSON(_ text: String) {
        #expect {
            try JSONResponseSerializer().serialize(response: Self.head(200, "application/json"), body: Data(text.utf8), url: nil)
        } throws: { error in
            guard case .decodingFailed = Self.reason(of: error) else { return false }
            return true
        }
    }

    @Test("JSON nested 100,000 deep fails with a typed error, not a stack overflow")
    func deepJSON() {
        let depth = 100_000
        let body = Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
        #expect {
            try JSONResponseSerializer().serialize(response: Self.head(200, "application/json"), body: body, url: nil)
        } throws: { error in
            guard case .nestingTooDeep(512) = Self.reason(of: error) else { return false }
            return true
        }
        #expect {
            try DecodableResponseSerializer<[JSONValue]>().serialize(response: Self.head(200), body: body, url: nil)
        } throws: { error in
            guard case .decodingFailed = Self.reason(of: error) else { return false }
            return true
        }
        let allowed = Data((String(repeating: "[", count: 500) + String(repeating: "]", count: 500)).utf8)
        #expect(throws: Never.self) {
            try JSONResponseSerializer().serialize(response: Self.head(200, "application/json"), body: allowed, url: nil)
        }
    }

    @Test("a 50 MiB body parses")
    func largeBody() throws {
        let text = String(repeating: "abcdefgh", count: 50 * 1024 * 1024 / 8)
        let body = Data("\"\(text)\"".utf8)
        let value = try JSONResponseSerializer().serialize(response: Self.head(200, "application/json"), body: body, url: nil)
        #expect(value.stringValue?.utf8.count == text.utf8.count)
        let string = try StringResponseSerializer().serialize(response: Self.head(200, "text/plain"), body: Data(text.utf8), url: nil)
        #expect(string.utf8.count == 50 * 1024 * 1024)
    }

    // MARK: Decodable

    struct User: Codable, Sendable, Equatable {
        var id: Int
        var name: String
        var tags: [String]
    }

    @Test("Decodable: a value; a failure says where")
    func decodable() throws {
        let serializer = DecodableResponseSerializer<User>()
        let user = try serializer.serialize(response: Self.head(200, "application/json"),
                                            body: Data(#"{"id":1,"name":"a","tags":["x"]}"#.utf8), url: nil)
        #expect(user == User(id: 1, name: "a", tags: ["x"]))
        #expect {
            try serializer.serialize(response: Self.head(200), body: Data(#"{"id":1,"name":"a","tags":["x",2]}"#.utf8), url: nil)
        } throws: { error in
            guard case .decodingFailed(_, let path) = Self.reason(of: error) else { return false }
            return path == ["tags", "1"]
        }
        #expect {
            try serializer.serialize(response: Self.head(200), body: Data(#"{"id":1,"tags":[]}"#.utf8), url: nil)
        } throws: { error in
            guard case .decodingFailed(_, let path) = Self.reason(of: error) else { return false }
            return path == ["name"]
        }
    }

    @Test("Decodable: empty bodies for 204/205/HEAD when the type can be empty")
    func decodableEmpty() throws {
        #expect(try DecodableResponseSerializer<Empty>().serialize(response: Self.head(204), body: nil, url: nil) == Empty())
        #expect(try DecodableResponseSerializer<User?>().serialize(response: Self.head(205), body: Data(), url: nil) == nil)
        #expect(try DecodableResponseSerializer<Empty>().serialize(response: Self.head(200), body: Data(), url: nil,
                                                                   requestMethod: .head) == Empty())
        // A User cannot stand for an empty 204; an empty 200 to GET is the server's mistake.
        for (status, method) in [(204, nil), (200, HTTPRequest.Method.get)] as [(Int, HTTPRequest.Method?)] {
            #expect {
                try DecodableResponseSerializer<User>().serialize(response: Self.head(status), body: Data(), url: nil,
                                                                  requestMethod: method)
            } throws: { error in
                guard case .emptyBody = Self.reason(of: error) else { return false }
                return true
            }
        }
    }

    @Test("Decodable: a property-list decoder works too")
    func decodablePlist() throws {
        let body = try PropertyListEncoder().encode(User(id: 2, name: "p", tags: []))
        let serializer = DecodableResponseSerializer<User>(decoder: PropertyListDecoder())
        #expect(try serializer.serialize(response: Self.head(200), body: body, url: nil) == User(id: 2, name: "p", tags: []))
    }

    @Test("the error body decodes as an error type")
    func decodeErrorBody() throws {
        struct Problem: Decodable { var title: String }
        let error = ResponseSerializationError(.unacceptableStatusCode(422), response: Self.head(422),
                                               body: Data(#"{"title":"bad"}"#.utf8), url: nil)
        #expect(try error.decodeBody(as: Problem.self).title == "bad")
    }

    // MARK: Property lists

    @Test("property lists: XML and binary, all value types")
    func propertyList() throws {
        let date = Date(timeIntervalSince1970: 1_000_000)
        let object: [String: Any] = ["s": "x", "i": 3, "r": 1.5, "b": true, "d": date, "data": Data([1, 2]), "a": [1, "two"]]
        for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
            let body = try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0)
            let value = try PropertyListResponseSerializer().serialize(response: Self.head(200, "application/x-plist"), body: body, url: nil)
            #expect(value == .dictionary(["s": .string("x"), "i": .integer(3), "r": .real(1.5), "b": .bool(true),
                                          "d": .date(date), "data": .data(Data([1, 2])), "a": .array([.integer(1), .string("two")])]))
        }
    }

    @Test("property lists: malformed, empty and deeply nested bodies are typed errors")
    func propertyListErrors() {
        let serializer = PropertyListResponseSerializer()
        let deep = "<plist version=\"1.0\">" + String(repeating: "<array>", count: 100_000)
            + String(repeating: "</array>", count: 100_000) + "</plist>"
        for body in ["<plist><dict><key>a</key></plist>", "\u{0}\u{1}garbage", deep] {
            #expect {
                try serializer.serialize(response: Self.head(200, "application/x-plist"), body: Data(body.utf8), url: nil)
            } throws: { error in
                guard case .decodingFailed = Self.reason(of: error) else { return false }
                return true
            }
        }
        #expect {
            try serializer.serialize(response: Self.head(200, "application/x-plist"), body: Data(), url: nil)
        } throws: { error in
            guard case .emptyBody = Self.reason(of: error) else { return false }
            return true
        }
    }

    // MARK: XML

    @Test("XML: elements, attributes, text and CDATA; no external entities")
    func xml() throws {
        let body = Data("""
            <?xml version="1.0"?>
            <feed xmlns:a="urn:a"><item id="1"><title>One &amp; two</title></item><item id="2"><a:t><![CDATA[<raw>]]></a:t></item></feed>
            """.utf8)
        let root = try XMLResponseSerializer().serialize(response: Self.head(200, "application/xml"), body: body, url: nil)
        #expect(root.name == "feed")
        #expect(root.elements(named: "item").map { $0.attributes["id"] } == ["1", "2"])
        #expect(root.firstElement(named: "item")?.firstElement(named: "title")?.text == "One & two")
        #expect(root.elements(named: "item").last?.firstElement(named: "a:t")?.text == "<raw>")
    }

    @Test("XML: malformed and empty bodies are typed errors", arguments: ["<a><b></a>", "not xml", "<a>", "<?xml version=\"1.0\"?>"])
    func malformedXML(_ text: String) {
        #expect {
            try XMLResponseSerializer().serialize(response: Self.head(200, "text/xml"), body: Data(text.utf8), url: nil)
        } throws: { error in
            guard case .decodingFailed = Self.reason(of: error) else { return false }
            return true
        }
    }

    @Test("XML nested 100,000 deep stops at the limit with nestingTooDeep")
    func deepXML() throws {
        let body = Data(("<?xml version=\"1.0\"?>" + String(repeating: "<a>", count: 100_000)
            + String(repeating: "</a>", count: 100_000)).utf8)
        #expect {
            try XMLResponseSerializer().serialize(response: Self.head(200, "text/xml"), body: body, url: nil)
        } throws: { error in
            guard case .nestingTooDeep(512) = Self.reason(of: error) else { return false }
            return true
        }
        var serializer = XMLResponseSerializer()
        serializer.maximumDepth = 3
        let shallow = Data("<a><b><c/></b></a>".utf8)
        #expect(try serializer.serialize(response: Self.head(200, "text/xml"), body: shallow, url: nil).name == "a")
        serializer.maximumDepth = 2
        #expect(throws: ResponseSerializationError.self) {
            try serializer.serialize(response: Self.head(200, "text/xml"), body: shallow, url: nil)
        }
    }

    // MARK: Compound

    @Test("compound: the first serializer that accepts; the first error when none does")
    func compound() throws {
        let compound = CompoundResponseSerializer([JSONResponseSerializer(), XMLResponseSerializer()])
        let json = try compound.serialize(response: Self.head(200, "application/json"), body: Data("[1]".utf8), url: nil)
        #expect(json as? JSONValue == [1])
        let xml = try compound.serialize(response: Self.head(200, "text/xml"), body: Data("<r/>".utf8), url: nil)
        #expect((xml as? XMLElementNode)?.name == "r")
        #expect {
            try compound.serialize(response: Self.head(200, "text/plain"), body: Data("x".utf8), url: nil)
        } throws: { error in
            guard case .unacceptableContentType("text/plain") = Self.reason(of: error) else { return false }
            return true
        }
        let empty = try CompoundResponseSerializer([]).serialize(response: Self.head(200), body: Data("x".utf8), url: nil)
        #expect(empty as? Data == Data("x".utf8))
    }
}
