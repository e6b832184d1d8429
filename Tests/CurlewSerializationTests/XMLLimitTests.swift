import CurlewSerialization
import Foundation
import HTTPTypes
import Testing

/// `XMLResponseSerializer` against hostile documents: work linear in the body, every limit with its
/// typed error (crossed, and raised), and the documents refused before libxml2 sees them.
@Suite("XML serializer limits")
struct XMLLimitTests {
    static func parse(_ body: Data, _ serializer: XMLResponseSerializer = XMLResponseSerializer()) throws -> XMLElementNode {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "application/xml"
        return try serializer.serialize(response: head, body: body, url: nil)
    }

    static func parse(_ text: String, _ serializer: XMLResponseSerializer = XMLResponseSerializer()) throws -> XMLElementNode {
        try Self.parse(Data(text.utf8), serializer)
    }

    static func reason(of error: any Error) -> ResponseSerializationError.Reason? {
        (error as? ResponseSerializationError)?.reason
    }

    /// Whether `error` is a refusal whose underlying error says `phrase`.
    static func isRefusal(_ error: any Error, saying phrase: String) -> Bool {
        guard case .decodingFailed(let underlying, _) = Self.reason(of: error) else { return false }
        return "\(underlying)".contains(phrase)
    }

    /// `text` in UTF-16 with a byte-order mark.
    static func utf16(_ text: String, bigEndian: Bool) -> Data {
        var bytes: [UInt8] = bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]
        for unit in text.utf16 {
            let (high, low) = (UInt8(unit >> 8), UInt8(unit & 0xFF))
            bytes += bigEndian ? [high, low] : [low, high]
        }
        return Data(bytes)
    }

    static func tag(_ name: String, attributes count: Int, value: String = "v") -> String {
        "<\(name) " + (0..<count).map { "a\($0)=\"\(value)\"" }.joined(separator: " ") + "/>"
    }

    // MARK: Text

    @Test("a million `&amp;` in one element are one run of text (5 MB: linear work, not a copy per piece)")
    func entityRun() throws {
        let count = 1_000_000
        let root = try Self.parse("<x>" + String(repeating: "&amp;", count: count) + "</x>")
        #expect(root.children.count == 1)
        #expect(root.text.utf8.count == count)
        #expect(root.text.allSatisfy { $0 == "&" })
    }

    @Test("text, CDATA and entities between two tags join into one run; runs keep their place among elements")
    func mixedContent() throws {
        let root = try Self.parse("<a>x&lt;<![CDATA[y]]>z<b>in</b>tail<c/></a>")
        #expect(root.children == [.text("x<yz"), .element(XMLElementNode(name: "b", children: [.text("in")])), .text("tail"),
                                  .element(XMLElementNode(name: "c"))])
    }

    // MARK: Nodes

    @Test("elements, attributes and runs of text count as nodes: the exact count passes, one fewer fails")
    func nodeCount() throws {
        // 3 elements, 3 attributes, 2 runs of text ("x", "y").
        let text = "<a p=\"1\"><b q=\"2\" r=\"3\">x</b>y<c/></a>"
        var serializer = XMLResponseSerializer()
        serializer.maximumNodeCount = 8
        #expect(try Self.parse(text, serializer).elements.count == 2)
        serializer.maximumNodeCount = 7
        #expect {
            try Self.parse(text, serializer)
        } throws: { error in
            guard case .tooManyNodes(7) = Self.reason(of: error) else { return false }
            return true
        }
    }

    @Test("a million and one elements cross the default limit; raising it parses them")
    func manyElements() throws {
        let text = "<x>" + String(repeating: "<a/>", count: 1_000_000) + "</x>"
        #expect {
            try Self.parse(text)
        } throws: { error in
            guard case .tooManyNodes(1_000_000) = Self.reason(of: error) else { return false }
            return true
        }
        var serializer = XMLResponseSerializer()
        serializer.maximumNodeCount = 1_000_001
        #expect(try Self.parse(text, serializer).children.count == 1_000_000)
    }

    // MARK: Attributes

    @Test("a start tag with more attributes than the limit is refused before libxml2 reads it; raising the limit parses it")
    func attributeLimit() throws {
        #expect(try Self.parse(Self.tag("x", attributes: 1024)).attributes.count == 1024)
        #expect {
            try Self.parse(Self.tag("x", attributes: 1025))
        } throws: { error in
            guard case .tooManyAttributes(1024) = Self.reason(of: error) else { return false }
            return true
        }
        var serializer = XMLResponseSerializer()
        serializer.maximumAttributeCount = 2000
        #expect(try Self.parse(Self.tag("x", attributes: 1025), serializer).attributes.count == 1025)
    }

    @Test("100,000 attributes in one tag (1 MB, quadratic in libxml2) are refused; so are tags hiding them", arguments: [
        "plain", "a > in every value", "after a broken tag", "UTF-16",
    ])
    func attributeAttacks(_ variant: String) throws {
        let body: Data
        switch variant {
        case "plain": body = Data(Self.tag("x", attributes: 100_000).utf8)
        case "a > in every value": body = Data(Self.tag("x", attributes: 2000, value: ">").utf8)
        // libxml2 recovers from the broken tag and reads the next one.
        case "after a broken tag": body = Data(("<r><x a\"/>" + Self.tag("y", attributes: 2000) + "</r>").utf8)
        default: body = Self.utf16(Self.tag("x", attributes: 2000), bigEndian: false)
        }
        #expect {
            try Self.parse(body)
        } throws: { error in
            guard case .tooManyAttributes(1024) = Self.reason(of: error) else { return false }
            return true
        }
    }

    @Test("`=` in text and in attribute values does not count as attributes")
    func equalsInText() throws {
        let equations = String(repeating: "a=b ", count: 5000)
        let root = try Self.parse("<x k=\"\(equations)\">\(equations)</x>")
        #expect(root.attributes["k"] == equations)
        #expect(root.text == equations)
    }

    // MARK: Refused documents

    @Test("entity and attribute declarations are refused: 1,000 declared default attributes on 1,000 elements would make a million")
    func declarations() throws {
        let declarations = "<!ATTLIST x " + (0..<1000).map { "a\($0) CDATA \"v\"" }.joined(separator: " ") + ">"
        let bomb = "<?xml version=\"1.0\"?><!DOCTYPE r [" + declarations + "]><r>" + String(repeating: "<x/>", count: 1000) + "</r>"
        for text in [bomb, "<!DOCTYPE x [<!ENTITY e \"hello\">]><x>&e;</x>",
                     "<!-- c --><?pi x?> <!DOCTYPE x SYSTEM \"a>b\" [<!ATTLIST x d CDATA \"v\">]><x/>",
                     // libxml2 ends the literal at the bad character, skips it and opens the subset at the `[`.
                     "<!DOCTYPE x SYSTEM \"\u{1}[<!ATTLIST x d CDATA 'v'>]><x/>",
                     "<?xml version=\"1.0\" x><!DOCTYPE x [<!ENTITY e \"&#60;y/>\">]><x>&e;</x>"] {
            #expect {
                try Self.parse(text)
            } throws: { error in
                Self.isRefusal(error, saying: "declare entities or attributes")
            }
        }
        // Other DTD content is harmless: an external DTD is not loaded, element declarations add nothing.
        #expect(try Self.parse("<!DOCTYPE x SYSTEM \"x.dtd\"><x/>").name == "x")
        #expect(try Self.parse("<!DOCTYPE x [<!ELEMENT x (#PCDATA)>]><x>t</x>").text == "t")
        #expect(try Self.parse("<x><!-- <!DOCTYPE y [ ]> --></x>").name == "x")
    }

    @Test("encodings whose markup is not ASCII bytes are refused; UTF-16 and ISO 8859 parse")
    func encodings() throws {
        // UTF-7 spells `a=` as `+AGE-+AD0-`: libxml2 would read attributes no byte shows.
        let refused: [(String, Data)] = [
            ("UTF-7", Data("<?xml version=\"1.0\" encoding=\"UTF-7\"?><x +AGE-+AD0-\"1\"/>".utf8)),
            ("Shift_JIS", Data("<?xml version=\"1.0\" encoding='Shift_JIS' ?><x/>".utf8)),
            ("EBCDIC", Data([0x4C, 0x6F, 0xA7, 0x94, 0x93])),
            ("UCS-4", Data([0x3C, 0, 0, 0, 0x78, 0, 0, 0])),
            // Little-endian bytes declared big-endian: libxml2 would switch to reading them the other way.
            ("UTF-16BE", Self.utf16("<?xml version=\"1.0\" encoding=\"UTF-16BE\"?><x/>", bigEndian: false)),
        ]
        for (name, body) in refused {
            #expect {
                try Self.parse(body)
            } throws: { error in
                Self.isRefusal(error, saying: "encoding \(name)")
            }
        }
        let latin1 = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><x a=\"".utf8) + [0xE9] + Array("\">caf".utf8) + [0xE9] + Array("</x>".utf8)
        let root = try Self.parse(Data(latin1))
        #expect(root.attributes["a"] == "é")
        #expect(root.text == "café")
        #expect(try Self.parse(Self.utf16("<?xml version=\"1.0\" encoding=\"UTF-16\"?><x>café</x>", bigEndian: true)).text == "café")
    }

    // MARK: Bytes FoundationXML cannot take

    static let notUTF8Documents: [[UInt8]] = {
        let comment: [UInt8] = Array("<x><!-- ".utf8) + [0xFF] + Array(" --></x>".utf8)
        let attributeName: [UInt8] = Array("<x a".utf8) + [0xFF] + Array("=\"1\"/>".utf8)
        let instruction: [UInt8] = Array("<x><?p".utf8) + [0xFF] + Array(" d?></x>".utf8)
        // A declaration libxml2 cannot read, so it would read the bytes as UTF-8.
        let brokenDeclaration: [UInt8] = Array("<?xm".utf8) + [0xFF, 0xFF] + Array("l version=\"1.0b\" encoding=\"ISO-8859-1\"?><x/>".utf8)
        // A code page Foundation does not decode.
        let latin9: [UInt8] = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-15\"?><x>".utf8) + [0xA4] + Array("</x>".utf8)
        var loneSurrogate: [UInt8] = [0xFF, 0xFE]
        for unit in "<x><!-- ".utf16 { loneSurrogate += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        loneSurrogate += [0x00, 0xD8, 0x3E, 0x00]
        return [comment, attributeName, instruction, brokenDeclaration, latin9, loneSurrogate]
    }()

    @Test("bytes that are not UTF-8 are refused before libxml2: FoundationXML crashed on them in a comment, an attribute name, a processing instruction",
          arguments: Self.notUTF8Documents)
    func notUTF8(_ bytes: [UInt8]) {
        #expect {
            try Self.parse(Data(bytes))
        } throws: { error in
            Self.isRefusal(error, saying: "not valid UTF-8")
        }
    }

    @Test("a document in ISO 8859-1 or Windows-1252 that is not valid UTF-8 is decoded before libxml2 reads it")
    func singleByteCodePages() throws {
        for name in ["ISO-8859-1", "windows-1252"] {
            let bytes = Array("<?xml version=\"1.0\" encoding=\"\(name)\"?><x a".utf8) + [0xE9] + Array("=\"".utf8) + [0xE9]
                + Array("\"><!-- ".utf8) + [0xFF] + Array(" -->caf".utf8) + [0xE9] + Array("</x>".utf8)
            let root = try Self.parse(Data(bytes))
            #expect(root.attributes["aé"] == "é")
            #expect(root.text == "café")
        }
    }

    @Test("a processing instruction without data is refused (FoundationXML crashed on <?pi?>); with data, or a space, it parses")
    func emptyProcessingInstruction() throws {
        for text in ["<x><?pi?></x>", "<?pi?><x/>", "<x><!-- <?pi?> --></x>", "<?xml?><x/>"] {
            #expect {
                try Self.parse(text)
            } throws: { error in
                Self.isRefusal(error, saying: "Processing instructions without data")
            }
        }
        #expect(try Self.parse("<?xml version=\"1.0\"?><x><?pi data?><?pi ?>t</x>").text == "t")
    }
}
