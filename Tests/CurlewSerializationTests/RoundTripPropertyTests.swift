import CurlewSerialization
import Foundation
import HTTPTypes
import PropertyBased
import Testing

/// Property-based round trips: what Curlew encodes, an independent decoder reads back unchanged.
@Suite("Round trips")
struct RoundTripPropertyTests {
    /// Text from every plane Curlew must escape: ASCII (reserved characters included), Latin-1,
    /// the rest of the BMP below the surrogates, combining marks (NFD text) and emoji.
    static let text = Gen<UnicodeScalar>.oneOf(
        Gen.unicodeScalar(in: " "..."~"),
        Gen.unicodeScalar(in: "\u{A0}"..."\u{FF}"),
        Gen.unicodeScalar(in: "\u{100}"..."\u{D7FF}"),
        Gen.unicodeScalar(in: "\u{300}"..."\u{36F}"),
        Gen.unicodeScalar(in: "\u{1F300}"..."\u{1FAFF}")
    ).map { Character($0) }.string(of: 0...12)

    /// Query items as `URLComponents` decodes them.
    static func decodedPairs(_ query: String) -> [[String]] {
        var components = URLComponents()
        components.percentEncodedQuery = query
        return (components.queryItems ?? []).map { [$0.name, $0.value ?? "<none>"] }
    }

    @Test("form-encoded pairs decode with URLComponents to the same pairs, sorted by name")
    func flatPairs() async {
        await propertyCheck(count: 300, input: zip(Self.text, Self.text).dictionary(ofAtMost: 0...8)) { dictionary in
            let parameters = dictionary.mapValues { ParameterValue.string($0) }
            let encoded = try URLEncodedFormEncoder().encode(parameters)
            #expect(encoded.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: " ") })
            let expected = parameters.keys.sorted().map { [$0, dictionary[$0] ?? ""] }
            if expected.isEmpty {
                #expect(encoded.isEmpty)
            } else {
                #expect(Self.decodedPairs(encoded) == expected)
            }
        }
    }

    @Test("arrays decode as repeated name[] items in order")
    func arrays() async {
        let values = Self.text.array(of: 0...5)
        await propertyCheck(count: 200, input: zip(Gen.letterOrNumber.string(of: 1...6), values)) { name, elements in
            let parameters: Parameters = [name: .array(elements.map { .string($0) })]
            let encoded = try URLEncodedFormEncoder().encode(parameters)
            #expect(Self.decodedPairs(encoded) == elements.map { ["\(name)[]", $0] })
        }
    }

    @Test("numbers survive the form as their exact value")
    func numbers() async {
        await propertyCheck(count: 300, input: zip(Gen.int(), Gen.double(in: -1e300...1e300))) { integer, double in
            let encoded = try URLEncodedFormEncoder().encode(["d": .double(double), "i": .integer(integer)])
            let pairs = Self.decodedPairs(encoded)
            #expect(pairs.count == 2)
            #expect(pairs.first.flatMap { Double($0[1]) } == double)
            #expect(pairs.last.flatMap { Int($0[1]) } == integer)
        }
    }

    /// Non-integral doubles, so that `2.0` (written `2`, read back as an integer) does not count as a change.
    static let fraction = Gen.double(in: -1e12...1e12).map { $0.rounded() == $0 ? $0 + 0.5 : $0 }

    static let scalar = Gen<JSONValue>.oneOf(
        Self.text.map { JSONValue.string($0) },
        Gen.int().map { JSONValue.integer($0) },
        Self.fraction.map { JSONValue.double($0) },
        Gen.bool.map { JSONValue.bool($0) },
        Gen.always(JSONValue.null)
    )

    @Test("JSON encoded by JSONEncoder parses back to the same JSONValue")
    func jsonIdentity() async {
        let document = zip(Self.text, Self.scalar.array(of: 0...4)).dictionary(ofAtMost: 0...6)
        await propertyCheck(count: 200, input: document) { members in
            let value = JSONValue.object(members.mapValues { JSONValue.array($0) })
            let body = try JSONEncoder().encode(value)
            var head = HTTPResponse(status: .ok)
            head.headerFields[.contentType] = "application/json"
            let parsed = try JSONResponseSerializer().serialize(response: head, body: body, url: nil)
            #expect(parsed == value)
            #expect(try JSONDecoder().decode(JSONValue.self, from: body) == value)
        }
    }

    @Test("JSON request bodies carry the parameters exactly")
    func jsonRequestBodies() async {
        await propertyCheck(count: 200, input: zip(Self.text, Self.text).dictionary(ofAtMost: 0...8)) { dictionary in
            let parameters = dictionary.mapValues { ParameterValue.string($0) }
            let request = try JSONRequestSerializer().request(method: .post, url: URL(string: "http://127.0.0.1/x")!,
                                                              parameters: parameters)
            guard case .data(let body)? = request.body else {
                Issue.record("no body")
                return
            }
            #expect(try JSONDecoder().decode([String: String].self, from: body) == dictionary)
        }
    }
}
