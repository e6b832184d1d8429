import Foundation

extension ParameterValue {
    /// The value tree of any `Encodable`, as the form and multipart encoders see it.
    ///
    /// Keyed containers become ``dictionary(_:)``, unkeyed ones ``array(_:)``; integers that fit
    /// `Int` become ``integer(_:)`` (larger unsigned ones a ``string(_:)`` of their digits), `Float`
    /// and `Double` ``double(_:)``, `encodeNil` ``null``. A few Foundation types are written the way
    /// a form expects rather than by their own `Encodable` conformance: `URL` as its absolute string,
    /// `Date` as ISO 8601 (`2026-11-23T10:00:00Z`), `Data` as Base64, `Decimal` as its description.
    /// A value that encodes nothing at all becomes ``null``.
    ///
    /// - Throws: ``RequestSerializationError`` with code
    ///   ``RequestSerializationError/Code/invalidParameters`` when the value's encoding throws or
    ///   nests deeper than ``maximumDepth``.
    public init(encoding value: some Encodable) throws(RequestSerializationError) {
        if let tree = value as? ParameterValue {
            self = tree
            return
        }
        let root = TreeNode()
        do {
            try ParameterTreeEncoder(node: root, codingPath: []).encodeValue(value)
        } catch {
            throw RequestSerializationError(encoding: error)
        }
        self = root.resolved()
    }
}

/// What one encoder or container wrote: resolved into a ``ParameterValue`` once encoding is done.
/// Reference semantics because containers write into the node after handing out nested ones.
private final class TreeNode {
    enum Content {
        case unset
        case value(ParameterValue)
        case keyed([String: TreeNode])
        case unkeyed([TreeNode])
    }

    var content: Content = .unset

    /// Makes this node keyed (keeping keys already written) and returns the child for `key`.
    func child(forKey key: String) -> TreeNode {
        var children: [String: TreeNode] = [:]
        if case .keyed(let existing) = self.content { children = existing }
        let child = children[key] ?? TreeNode()
        children[key] = child
        self.content = .keyed(children)
        return child
    }

    func makeKeyed() {
        if case .keyed = self.content { return }
        self.content = .keyed([:])
    }

    /// Makes this node unkeyed and appends a new child.
    func appendChild() -> TreeNode {
        var children: [TreeNode] = []
        if case .unkeyed(let existing) = self.content { children = existing }
        let child = TreeNode()
        children.append(child)
        self.content = .unkeyed(children)
        return child
    }

    func makeUnkeyed() {
        if case .unkeyed = self.content { return }
        self.content = .unkeyed([])
    }

    var unkeyedCount: Int {
        if case .unkeyed(let children) = self.content { return children.count }
        return 0
    }

    /// The tree below this node. Its depth is bounded by ``ParameterValue/maximumDepth`` (checked while encoding).
    func resolved() -> ParameterValue {
        switch self.content {
        case .unset: return .null
        case .value(let value): return value
        case .keyed(let children): return .dictionary(children.mapValues { $0.resolved() })
        case .unkeyed(let children): return .array(children.map { $0.resolved() })
        }
    }
}

/// An `Encoder` that builds a ``ParameterValue`` tree.
private struct ParameterTreeEncoder: Encoder {
    let node: TreeNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        self.node.makeKeyed()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: self.node, codingPath: self.codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        self.node.makeUnkeyed()
        return UnkeyedContainer(node: self.node, codingPath: self.codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(node: self.node, codingPath: self.codingPath)
    }

    /// Encodes `value` into this encoder's node, with the special cases and the depth check.
    func encodeValue(_ value: some Encodable) throws {
        guard self.codingPath.count < ParameterValue.maximumDepth else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: self.codingPath,
                debugDescription: "Parameters nest deeper than \(ParameterValue.maximumDepth) levels."))
        }
        switch value {
        case let tree as ParameterValue:
            try Self.checkDepth(of: tree, at: self.codingPath)
            self.node.content = .value(tree)
        case let url as URL:
            self.node.content = .value(.string(url.absoluteString))
        case let date as Date:
            self.node.content = .value(.string(date.formatted(.iso8601)))
        case let data as Data:
            self.node.content = .value(.string(data.base64EncodedString()))
        case let decimal as Decimal:
            self.node.content = .value(.string(decimal.description))
        default:
            try value.encode(to: self)
        }
    }

    /// A ready-made tree must respect the depth limit too (it is walked recursively later).
    private static func checkDepth(of tree: ParameterValue, at path: [any CodingKey]) throws {
        var pending: [(ParameterValue, Int)] = [(tree, path.count + 1)]
        while let (value, depth) = pending.popLast() {
            switch value {
            case .array(let values):
                guard depth < ParameterValue.maximumDepth else { throw Self.tooDeep(tree, path) }
                pending.append(contentsOf: values.map { ($0, depth + 1) })
            case .dictionary(let values):
                guard depth < ParameterValue.maximumDepth else { throw Self.tooDeep(tree, path) }
                pending.append(contentsOf: values.values.map { ($0, depth + 1) })
            default:
                break
            }
        }
    }

    private static func tooDeep(_ tree: ParameterValue, _ path: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(tree, EncodingError.Context(
            codingPath: path, debugDescription: "Parameters nest deeper than \(ParameterValue.maximumDepth) levels."))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: TreeNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws {
        self.node.child(forKey: key.stringValue).content = .value(.null)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try ParameterTreeEncoder(node: self.node.child(forKey: key.stringValue), codingPath: self.codingPath + [key])
            .encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        ParameterTreeEncoder(node: self.node.child(forKey: key.stringValue), codingPath: self.codingPath + [key])
            .container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ParameterTreeEncoder(node: self.node.child(forKey: key.stringValue), codingPath: self.codingPath + [key])
            .unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let key = ParameterKey("super")
        return ParameterTreeEncoder(node: self.node.child(forKey: key.stringValue), codingPath: self.codingPath + [key])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ParameterTreeEncoder(node: self.node.child(forKey: key.stringValue), codingPath: self.codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: TreeNode
    let codingPath: [any CodingKey]
    var count: Int { self.node.unkeyedCount }

    private var nextPath: [any CodingKey] { self.codingPath + [ParameterKey(intValue: self.count)] }

    mutating func encodeNil() throws {
        self.node.appendChild().content = .value(.null)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = self.nextPath
        try ParameterTreeEncoder(node: self.node.appendChild(), codingPath: path).encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = self.nextPath
        return ParameterTreeEncoder(node: self.node.appendChild(), codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = self.nextPath
        return ParameterTreeEncoder(node: self.node.appendChild(), codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let path = self.nextPath
        return ParameterTreeEncoder(node: self.node.appendChild(), codingPath: path)
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let node: TreeNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { self.node.content = .value(.null) }
    mutating func encode(_ value: Bool) throws { self.node.content = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { self.node.content = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { self.node.content = .value(.double(value)) }
    mutating func encode(_ value: Float) throws {
        // Through its shortest text, so 0.1 as Float stays "0.1" rather than 0.10000000149011612.
        self.node.content = .value(.double(value.isFinite ? Double("\(value)") ?? Double(value) : Double(value)))
    }
    mutating func encode(_ value: Int) throws { self.node.content = .value(.integer(value)) }
    mutating func encode(_ value: Int8) throws { self.node.content = .value(.integer(Int(value))) }
    mutating func encode(_ value: Int16) throws { self.node.content = .value(.integer(Int(value))) }
    mutating func encode(_ value: Int32) throws { self.node.content = .value(.integer(Int(value))) }
    mutating func encode(_ value: Int64) throws { self.node.content = .value(.integer(Int(value))) }
    mutating func encode(_ value: UInt) throws { self.encodeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { self.node.content = .value(.integer(Int(value))) }
    mutating func encode(_ value: UInt16) throws { self.node.content = .value(.integer(Int(value))) }
    mutating func encode(_ value: UInt32) throws { self.node.content = .value(.integer(Int(value))) }
    mutating func encode(_ value: UInt64) throws { self.encodeUnsigned(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try ParameterTreeEncoder(node: self.node, codingPath: self.codingPath).encodeValue(value)
    }

    private func encodeUnsigned(_ value: UInt64) {
        self.node.content = .value(value <= UInt64(Int.max) ? .integer(Int(value)) : .string(String(value)))
    }
}
