import Foundation
import HTTPTypes

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Validates the response and parses the body as XML into an ``XMLElementNode`` tree (its root):
/// AFNetworking's `AFXMLParserResponseSerializer` / `AFXMLDocumentResponseSerializer`.
///
/// Accepts `application/xml` and `text/xml` by default. Parsing uses FoundationXML's `XMLParser`
/// (libxml2's streaming parser): external entities are not resolved, so a document cannot make the
/// client read local files or fetch URLs. An empty body fails with
/// ``ResponseSerializationError/Reason/emptyBody``; malformed XML with
/// ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)``.
///
/// Work and memory are linear in the body, whatever it holds:
/// - Elements nested deeper than ``maximumDepth`` fail with
///   ``ResponseSerializationError/Reason/nestingTooDeep(limit:)`` (the streaming parser itself has no
///   limit, and `XMLDocument` silently truncates a document deeper than 256 levels).
/// - More than ``maximumNodeCount`` elements, attributes and runs of text fail with
///   ``ResponseSerializationError/Reason/tooManyNodes(limit:)``, which bounds the tree's memory.
/// - A start tag with more than ``maximumAttributeCount`` attributes fails with
///   ``ResponseSerializationError/Reason/tooManyAttributes(limit:)`` before libxml2 reads it
///   (libxml2 2.9 takes time quadratic in the attributes of one tag).
/// - A document that declares entities or attributes (`<!ENTITY`, `<!ATTLIST`), or is in an
///   encoding whose markup is not ASCII bytes (anything but UTF-8, UTF-16, ASCII and the ISO 8859
///   and Windows code pages), fails with
///   ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)``: such
///   declarations make libxml2 add attributes to every element or expand entities into markup,
///   and `XMLParser` on Linux drops the text of internal entities anyway.
/// - A body that is not valid UTF-8 (or UTF-16) fails the same way, unless it declares a
///   single-byte code page Foundation decodes (ISO 8859-1 and -2, Windows 1250 to 1254), in which
///   case it is decoded before libxml2 reads it: FoundationXML crashes on some such bytes (a
///   comment or an attribute name holding `0xFF`). So does a processing instruction without data
///   (`<?name?>`), which FoundationXML crashes on too.
///
/// The limits and measurements are in `Docs/Serialization.md`.
///
/// ```swift
/// operation.responseSerializer = XMLResponseSerializer()
/// let root = try await operation.responseValue(as: XMLElementNode.self)
/// ```
///
/// On Linux, FoundationXML needs libxml2 at run time (Debian's `libxml2`, which the Swift toolchain
/// already requires; `Scripts/ensure-dependencies.sh` installs it when missing).
public struct XMLResponseSerializer: ValidatingResponseSerializer, Hashable {
    public var acceptableStatusCodes = IndexSet(integersIn: 200..<300)
    public var acceptableContentTypes: Set<String>? = ["application/xml", "text/xml"]
    /// The deepest element nesting accepted (the root is depth 1); 512 by default.
    public var maximumDepth = 512
    /// The most nodes accepted: elements, attributes and runs of text (a run is the text between
    /// two tags, CDATA included); 1,000,000 by default.
    public var maximumNodeCount = 1_000_000
    /// The most attributes accepted in one start tag; 1,024 by default.
    public var maximumAttributeCount = 1024

    /// Creates the serializer: 2xx, XML content types, the default limits.
    public init() {}

    /// The body's root element, once the response is valid.
    ///
    /// - Throws: ``ResponseSerializationError``: an unacceptable status or content type, an empty
    ///   body, a limit crossed, a refused document, or XML that does not parse.
    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> XMLElementNode {
        try self.validatedValue(response: response, body: body, url: url) { () throws(ResponseSerializationError) -> XMLElementNode in
            guard let body, !body.isEmpty else {
                throw ResponseSerializationError(.emptyBody, response: response, body: body, url: url)
            }
            let markup: Data
            switch XMLMarkupScanner(maximumAttributeCount: self.maximumAttributeCount).prepared(body) {
            case .success(let prepared):
                markup = prepared
            case .failure(let refusal):
                throw ResponseSerializationError(self.reason(for: refusal), response: response, body: body, url: url)
            }
            let builder = XMLTreeBuilder(maximumDepth: self.maximumDepth, maximumNodeCount: self.maximumNodeCount)
            let parser = XMLParser(data: markup)
            parser.shouldResolveExternalEntities = false
            parser.delegate = builder
            let parsed = parser.parse()
            if let exceeded = builder.exceededLimit {
                throw ResponseSerializationError(exceeded, response: response, body: body, url: url)
            }
            guard parsed, let root = builder.root else {
                let error: any Error = parser.parserError ?? Self.corrupt("The body holds no XML element.")
                throw ResponseSerializationError(.decodingFailed(underlying: error, codingPath: builder.openNames),
                                                 response: response, body: body, url: url)
            }
            return root
        }
    }

    private func reason(for refusal: XMLMarkupScanner.Refusal) -> ResponseSerializationError.Reason {
        switch refusal {
        case .tooManyAttributes:
            return .tooManyAttributes(limit: self.maximumAttributeCount)
        case .declarations:
            return .decodingFailed(underlying: Self.corrupt("Documents that declare entities or attributes (<!ENTITY, <!ATTLIST) are refused."),
                                   codingPath: [])
        case .emptyProcessingInstruction:
            return .decodingFailed(underlying: Self.corrupt("Processing instructions without data (<?name?>) are refused."), codingPath: [])
        case .invalidUTF8:
            return .decodingFailed(underlying: Self.corrupt("The body is not valid UTF-8 (or UTF-16)."), codingPath: [])
        case .unsupportedEncoding(let name):
            return .decodingFailed(underlying: Self.corrupt("XML in the encoding \(name) is refused: only UTF-8, UTF-16, ASCII and the ISO 8859 and Windows code pages are read."),
                                   codingPath: [])
        }
    }

    private static func corrupt(_ description: String) -> CocoaError {
        CocoaError(.coderReadCorrupt, userInfo: [NSDebugDescriptionErrorKey: description])
    }
}

/// Builds the element tree from `XMLParser`'s events with an explicit stack (no recursion), and
/// stops the parser when the nesting or the node count passes its limit. Text is collected in
/// place for the innermost open element and stored when a tag follows, so a run reported in a
/// million pieces (a million `&amp;`) costs linear time. Used by one parse on one thread.
private final class XMLTreeBuilder: NSObject, XMLParserDelegate {
    private let maximumDepth: Int
    private let maximumNodeCount: Int
    /// Open elements, innermost last.
    private var stack: [XMLElementNode] = []
    /// The text since the last tag, for the innermost open element.
    private var text = ""
    private var nodeCount = 0
    private(set) var root: XMLElementNode?
    /// The limit that stopped the parser.
    private(set) var exceededLimit: ResponseSerializationError.Reason?

    init(maximumDepth: Int, maximumNodeCount: Int) {
        self.maximumDepth = maximumDepth
        self.maximumNodeCount = maximumNodeCount
    }

    /// The names of the open elements: where parsing stopped.
    var openNames: [String] { self.stack.map(\.name) }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        guard self.stack.count < self.maximumDepth else {
            self.stop(parser, .nestingTooDeep(limit: self.maximumDepth))
            return
        }
        guard self.count(1 + attributes.count, parser) else { return }
        self.storeText()
        self.stack.append(XMLElementNode(name: qualifiedName ?? elementName, attributes: attributes))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        self.storeText()
        guard let element = self.stack.popLast() else { return }
        if self.stack.isEmpty {
            self.root = element
        } else {
            self.stack[self.stack.count - 1].children.append(.element(element))
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        self.appendText(string, parser)
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        self.appendText(String(decoding: block, as: UTF8.self), parser)
    }

    /// Adds text to the run of the innermost open element (the parser may report one run in
    /// many pieces); a new run counts as a node.
    private func appendText(_ piece: String, _ parser: XMLParser) {
        guard !self.stack.isEmpty, !piece.isEmpty else { return }
        if self.text.isEmpty {
            guard self.count(1, parser) else { return }
        }
        self.text += piece
    }

    /// Stores the pending run as the innermost open element's last child.
    private func storeText() {
        guard !self.text.isEmpty, !self.stack.isEmpty else { return }
        self.stack[self.stack.count - 1].children.append(.text(self.text))
        self.text = ""
    }

    /// Counts `nodes` more; stops the parser and returns `false` past the limit.
    private func count(_ nodes: Int, _ parser: XMLParser) -> Bool {
        self.nodeCount += nodes
        guard self.nodeCount <= self.maximumNodeCount else {
            self.stop(parser, .tooManyNodes(limit: self.maximumNodeCount))
            return false
        }
        return true
    }

    private func stop(_ parser: XMLParser, _ reason: ResponseSerializationError.Reason) {
        if self.exceededLimit == nil {
            self.exceededLimit = reason
        }
        parser.abortParsing()
    }
}
