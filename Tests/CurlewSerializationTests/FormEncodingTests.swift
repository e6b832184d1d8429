import CurlewSerialization
import Foundation
import Testing

/// The query/form encoding, case by case: escaping, nesting, arrays, null, numbers and order.
@Suite("Form encoding")
struct FormEncodingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var parameters: Parameters
        var expected: String
        var encoder = URLEncodedFormEncoder()
        var testDescription: String { self.label }
    }

    static let cases: [Case] = [
        Case(label: "plain", parameters: ["q": "swift"], expected: "q=swift"),
        Case(label: "space is %20, never +", parameters: ["q": "a b"], expected: "q=a%20b"),
        Case(label: "plus, ampersand and equals are escaped", parameters: ["q": "1+1=2&x"], expected: "q=1%2B1%3D2%26x"),
        Case(label: "reserved characters are escaped", parameters: ["r": ":/?#[]@!$&'()*,;="],
             expected: "r=%3A%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2C%3B%3D"),
        Case(label: "unreserved characters stay", parameters: ["u": "AZaz09-._~"], expected: "u=AZaz09-._~"),
        Case(label: "percent itself", parameters: ["p": "100%"], expected: "p=100%25"),
        Case(label: "NFC é", parameters: ["e": "\u{E9}"], expected: "e=%C3%A9"),
        Case(label: "NFD é keeps its bytes", parameters: ["e": "e\u{301}"], expected: "e=e%CC%81"),
        Case(label: "emoji", parameters: ["e": "🐦"], expected: "e=%F0%9F%90%A6"),
        Case(label: "escaped keys", parameters: ["a b&c": "1"], expected: "a%20b%26c=1"),
        Case(label: "empty key and value", parameters: ["": "", "k": ""], expected: "=&k="),
        Case(label: "null gives the key alone", parameters: ["flag": nil, "x": 1], expected: "flag&x=1"),
        Case(label: "keys sorted", parameters: ["b": 2, "a": 1, "c": 3, "B": 0], expected: "B=0&a=1&b=2&c=3"),
        Case(label: "nested dictionary", parameters: ["filter": ["min": 1, "max": 9]],
             expected: "filter%5Bmax%5D=9&filter%5Bmin%5D=1"),
        Case(label: "deep nesting", parameters: ["a": ["b": ["c": "d"]]], expected: "a%5Bb%5D%5Bc%5D=d"),
        Case(label: "array with brackets", parameters: ["tags": ["a", "b"]], expected: "tags%5B%5D=a&tags%5B%5D=b"),
        Case(label: "array without brackets", parameters: ["tags": ["a", "b"]], expected: "tags=a&tags=b",
             encoder: URLEncodedFormEncoder(arrayEncoding: .noBrackets)),
        Case(label: "indexed array", parameters: ["tags": ["a", "b"]], expected: "tags%5B0%5D=a&tags%5B1%5D=b",
             encoder: URLEncodedFormEncoder(arrayEncoding: .indexed)),
        Case(label: "array of dictionaries", parameters: ["p": [["x": 1], ["x": 2]]], expected: "p%5B%5D%5Bx%5D=1&p%5B%5D%5Bx%5D=2"),
        Case(label: "array keeps order", parameters: ["n": [3, 1, 2]], expected: "n%5B%5D=3&n%5B%5D=1&n%5B%5D=2"),
        Case(label: "empty array and dictionary give nothing", parameters: ["a": [], "d": [:], "x": 1], expected: "x=1"),
        Case(label: "Booleans numeric by default", parameters: ["t": true, "f": false], expected: "f=0&t=1"),
        Case(label: "Booleans literal", parameters: ["t": true, "f": false], expected: "f=false&t=true",
             encoder: URLEncodedFormEncoder(boolEncoding: .literal)),
        Case(label: "integers", parameters: ["i": 42, "n": -7, "big": .integer(Int.max)],
             expected: "big=9223372036854775807&i=42&n=-7"),
        Case(label: "doubles without locale", parameters: ["a": 0.1, "b": 2.0, "c": 1e-5, "d": -1.5, "e": 1.5e300, "f": 1234567.25],
             expected: "a=0.1&b=2&c=1e-05&d=-1.5&e=1.5e%2B300&f=1234567.25"),
        Case(label: "empty parameters", parameters: [:], expected: ""),
    ]

    @Test("encodes", arguments: Self.cases)
    func encodes(_ testCase: Case) throws {
        #expect(try testCase.encoder.encode(testCase.parameters) == testCase.expected)
    }

    @Test("the same parameters always give the same text")
    func stableOrder() throws {
        var parameters: Parameters = [:]
        for index in 0..<200 { parameters["k\(index)"] = .integer(index) }
        let first = try URLEncodedFormEncoder().encode(parameters)
        for _ in 0..<10 {
            let copy = Parameters(uniqueKeysWithValues: parameters.shuffled())
            #expect(try URLEncodedFormEncoder().encode(copy) == first)
        }
    }

    @Test("numbers are written the same under any locale")
    func noLocale() throws {
        let saved = setlocale(LC_ALL, nil).map { String(cString: $0) }
        defer { _ = setlocale(LC_ALL, saved ?? "C") }
        _ = setlocale(LC_ALL, "de_DE.UTF-8")
        #expect(try URLEncodedFormEncoder().encode(["x": 1234.5, "y": 1_000_000]) == "x=1234.5&y=1000000")
    }

    struct Search: Encodable, Sendable {
        var query: String
        var page: Int
        var ratio: Float
        var when: Date
        var site: URL
        var tags: [String]
        var note: String?
        var filter: Filter
        struct Filter: Encodable, Sendable { var min: UInt8; var exact: Bool }
    }

    @Test("an Encodable struct encodes like the equivalent literal")
    func encodable() throws {
        let search = Search(query: "a b", page: 2, ratio: 0.1, when: Date(timeIntervalSince1970: 0),
                            site: URL(string: "https://example.com/x?y")!, tags: ["t"], note: nil,
                            filter: .init(min: 3, exact: true))
        #expect(try URLEncodedFormEncoder().encode(search)
            == "filter%5Bexact%5D=1&filter%5Bmin%5D=3&page=2&query=a%20b&ratio=0.1&site=https%3A%2F%2Fexample.com%2Fx%3Fy"
            + "&tags%5B%5D=t&when=1970-01-01T00%3A00%3A00Z")
    }

    static let nonFinite: [(Parameters, [String])] = [
        (["x": .double(.nan)], ["x"]),
        (["a": [1, .double(.infinity)]], ["a", "1"]),
    ]

    @Test("non-finite numbers are typed errors with their path", arguments: Self.nonFinite)
    func invalid(_ parameters: Parameters, _ path: [String]) {
        #expect {
            try URLEncodedFormEncoder().encode(parameters)
        } throws: { error in
            let error = error as? RequestSerializationError
            return error?.code == .invalidParameters && error?.codingPath == path
        }
    }

    @Test("the top level must be keyed")
    func unkeyed() {
        #expect(throws: RequestSerializationError.self) { try URLEncodedFormEncoder().encode(["a", "b"] as [String]) }
        #expect(throws: RequestSerializationError.self) { try URLEncodedFormEncoder().encode(42) }
    }

    @Test("nesting deeper than the limit is refused without overflowing the stack")
    func deepNesting() throws {
        var deep: ParameterValue = "leaf"
        for _ in 0..<100_000 { deep = .array([deep]) }
        var parameters: Parameters = ["deep": deep]
        #expect {
            try URLEncodedFormEncoder().encode(parameters)
        } throws: { error in
            (error as? RequestSerializationError)?.code == .invalidParameters
        }
        var shallowEnough: ParameterValue = "leaf"
        for _ in 0..<(ParameterValue.maximumDepth - 2) { shallowEnough = .array([shallowEnough]) }
        #expect(try URLEncodedFormEncoder().encode(["d": shallowEnough]).hasSuffix("=leaf"))
        // Tear the deep value down iteratively: its recursive deinit would need a deep stack too.
        parameters = [:]
        deep.tearDown()
    }
}

extension ParameterValue {
    /// Releases a deeply nested single-element chain from the outside in, so no release recurses.
    mutating func tearDown() {
        while case .array(let inner) = self, let next = inner.first { self = next }
    }
}
