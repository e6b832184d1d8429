/// One element of an XML document as a `Sendable` value: what ``XMLResponseSerializer`` returns
/// (the root element).
///
/// FoundationXML's `XMLDocument` and `XMLElement` are classes that are not `Sendable`, so they
/// cannot cross from the serializer's queue to a handler; this is the same tree as plain values.
///
/// ```swift
/// let feed = try await operation.responseValue(as: XMLElementNode.self)
/// for item in feed.elements(named: "item") {
///     print(item.firstElement(named: "title")?.text ?? "", item.attributes["id"] ?? "")
/// }
/// ```
public struct XMLElementNode: Sendable, Hashable {
    /// Character data or a child element, in document order.
    public enum Child: Sendable, Hashable {
        /// Text (CDATA sections included), entities resolved.
        case text(String)
        /// A child element.
        case element(XMLElementNode)
    }

    /// The element's qualified name as written (`atom:link`).
    public var name: String
    /// The attributes, by qualified name.
    public var attributes: [String: String]
    /// Text and child elements in document order.
    public var children: [Child]

    /// Creates an element.
    public init(name: String, attributes: [String: String] = [:], children: [Child] = []) {
        self.name = name
        self.attributes = attributes
        self.children = children
    }

    /// The child elements, in order.
    public var elements: [XMLElementNode] {
        self.children.compactMap { child in
            if case .element(let element) = child { return element }
            return nil
        }
    }

    /// The child elements named `name`, in order.
    public func elements(named name: String) -> [XMLElementNode] {
        self.elements.filter { $0.name == name }
    }

    /// The first child element named `name`.
    public func firstElement(named name: String) -> XMLElementNode? {
        self.elements.first { $0.name == name }
    }

    /// The element's own text: its text children joined (not its descendants').
    public var text: String {
        self.children.reduce(into: "") { text, child in
            if case .text(let piece) = child { text += piece }
        }
    }
}
