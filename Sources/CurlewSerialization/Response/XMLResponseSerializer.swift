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
/// client read local files or fetch URLs. Elements nested deeper than ``maximumDepth`` fail with
/// ``ResponseSerializationError/Reason/nestingTooDeep(limit:)``: the streaming parser itself has no
/// limit, and `XMLDocument` silently truncates a document deeper than 256 levels (both measured in
/// `Docs/Serialization.md`). An empty body fails with ``ResponseSerializationError/Reason/emptyBody``;
/// malformed XML with ``ResponseSerializationError/Reason/decodingFailed(underlying:codingPath:)``.
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

    /// Creates the serializer: 2xx, XML content types, depth up to 512.
    public init() {}

    /// The body's root element, once the response is valid.
    ///
    /// - Throws: ``ResponseSerializationError``: an unacceptable status or content type, an empty
    ///   body, nesting deeper than ``maximumDepth``, or XML that does not parse.
    public func serialize(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) -> XMLElementNode {
        try self.validatedValue(response: response, body: body, url: url) { () throws(ResponseSerializationError) -> XMLElementNode in
            guard let body, !body.isEmpty else {
                throw ResponseSerializationError(.emptyBody, response: response, body: body, url: url)
            }
            let builder = XMLTreeBuilder(maximumDepth: self.maximumDepth)
            let parser = XMLParser(data: body)
            parser.shouldResolveExternalEntities = false
            parser.delegate = builder
            let parsed = parser.parse()
            if builder.exceededDepth {
                throw ResponseSerializationError(.nestingTooDeep(limit: self.maximumDepth), response: response, body: body, url: url)
            }
            guard parsed, let root = builder.root else {
                let error: any Error = parser.parserError
                    ?? CocoaError(.propertyListReadCorrupt, userInfo: [NSDebugDescriptionErrorKey: "The body holds no XML element."])
                throw ResponseSerializationError(.decodingFailed(underlying: error, codingPath: builder.openNames),
                                                 response: response, body: body, url: url)
            }
            return root
        }
    }
}

/// Builds the element tree from `XMLParser`'s events with an explicit stack (no recursion), and
/// stops the parser when the nesting passes the limit. Used by one parse on one thread.
private final class XMLTreeBuilder: NSObject, XMLParserDelegate {
    private let maximumDepth: Int
    /// Open elements, innermost last.
    private var stack: [XMLElementNode] = []
    private(set) var root: XMLElementNode?
    private(set) var exceededDepth = false

    init(maximumDepth: Int) {
        self.maximumDepth = maximumDepth
    }

    /// The names of the open elements: where parsing stopped.
    var openNames: [String] { self.stack.map(\.name) }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        guard self.stack.count < self.maximumDepth else {
            self.exceededDepth = true
            parser.abortParsing()
            return
        }
        self.stack.append(XMLElementNode(name: qualifiedName ?? elementName, attributes: attributes))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard let element = self.stack.popLast() else { return }
        if self.stack.isEmpty {
            self.root = element
        } else {
            self.stack[self.stack.count - 1].children.append(.element(element))
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        self.appendText(string)
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        self.appendText(String(decoding: block, as: UTF8.self))
    }

    /// Adds text to the innermost open element, joining it with text just before it (the parser
    /// may report one run of text in several pieces).
    private func appendText(_ text: String) {
        guard !self.stack.isEmpty else { return }
        let index = self.stack.count - 1
        if case .text(let previous)? = self.stack[index].children.last {
            self.stack[index].children[self.stack[index].children.count - 1] = .text(previous + text)
        } else {
            self.stack[index].children.append(.text(text))
        }
    }
}
