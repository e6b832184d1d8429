import Foundation
import HTTPTypes

/// Entry points for the libFuzzer targets in `Fuzz/` that drive the response serializers with
/// arbitrary bytes. Each checks what its limits promise against what was actually built, and traps
/// when a promise breaks (a trap is what the fuzzer reports). Not API:
/// `@_spi(Fuzzing) import CurlewSerialization`.
@_spi(Fuzzing)
public enum SerializationFuzzingEntryPoints {
    /// Small limits, so that no input makes Foundation build much.
    static let nodeLimit = 20_000
    static let byteLimit = 1 << 20

    /// The bytes as a property list: the scanner's count must bound what Foundation built, and
    /// nothing past the limits may be built at all.
    public static func propertyList(_ bytes: UnsafeRawBufferPointer) {
        let body = Data(bytes)
        var serializer = PropertyListResponseSerializer()
        serializer.maximumNodeCount = Self.nodeLimit
        serializer.maximumExpandedByteCount = Self.byteLimit
        guard let value = try? serializer.serialize(response: Self.head("application/x-plist"), body: body, url: nil) else { return }
        let (nodes, bytesBuilt) = Self.size(of: value)
        if bytes.hasBytes(Array("bplist".utf8), at: 0) {
            let scanner = BinaryPropertyListScanner(maximumNodeCount: Self.nodeLimit, maximumByteCount: Self.byteLimit)
            guard let expansion = try? scanner.expansion(of: bytes) else {
                preconditionFailure("a binary property list the scanner refuses was parsed")
            }
            precondition(nodes <= expansion.nodes, "\(nodes) values built, \(expansion.nodes) counted")
            precondition(bytesBuilt <= expansion.bytes, "\(bytesBuilt) bytes built, \(expansion.bytes) counted")
        } else {
            let bound = (try? TextPropertyListScanner.nodeBound(of: bytes)) ?? 0
            precondition(nodes <= bound, "\(nodes) values built from text bounded at \(bound)")
        }
    }

    /// The bytes as XML with small limits: the tree must respect every one of them, the attribute
    /// count (checked in the raw bytes, before libxml2 and its error recovery) included.
    public static func xml(_ bytes: UnsafeRawBufferPointer) {
        var serializer = XMLResponseSerializer()
        serializer.maximumDepth = 32
        serializer.maximumNodeCount = 2_000
        serializer.maximumAttributeCount = 3
        guard let root = try? serializer.serialize(response: Self.head("application/xml"), body: Data(bytes), url: nil) else { return }
        var nodes = 0
        var pending = [(root, 1)]
        while let (element, depth) = pending.popLast() {
            precondition(depth <= serializer.maximumDepth, "an element at depth \(depth)")
            precondition(element.attributes.count <= serializer.maximumAttributeCount, "\(element.attributes.count) attributes built")
            nodes += 1 + element.attributes.count
            for child in element.children {
                switch child {
                case .element(let inner): pending.append((inner, depth + 1))
                case .text: nodes += 1
                }
            }
        }
        precondition(nodes <= serializer.maximumNodeCount, "\(nodes) nodes built")
    }

    /// The bytes as JSON: the parser must accept what `JSONDecoder` accepts, with the same value
    /// (but for fractions above 2⁵³, which it keeps as doubles), and `JSONValueCounter` must count
    /// at least the values built. `JSONDecoder` checks a number or a string only when it decodes
    /// it, so it accepts a malformed one in the value of a repeated key, which it never decodes (the
    /// first value is kept); the parser refuses it. That is the one case where `JSONDecoder` may
    /// accept alone, and then the counter finds more values than `JSONDecoder` built.
    public static func json(_ bytes: UnsafeRawBufferPointer) {
        let body = Data(bytes)
        let parsed = try? JSONParser(maximumDepth: 512, maximumNodeCount: .max).parse(body)
        let decoded = try? JSONDecoder().decode(JSONValue.self, from: body)
        switch (parsed, decoded) {
        case (nil, nil):
            return
        case (let parsed?, let decoded?):
            precondition(Self.matches(parsed, decoded), "parsed \(parsed), JSONDecoder decoded \(decoded)")
            let values = Self.count(parsed)
            precondition(!JSONValueCounter.isWithin(values - 1, body), "fewer values counted than the \(values) built")
        case (nil, let decoded?):
            precondition(!JSONValueCounter.isWithin(Self.count(decoded), body), "refused, but JSONDecoder decoded \(decoded)")
        case (let parsed?, nil):
            preconditionFailure("parsed \(parsed), but JSONDecoder refused it")
        }
    }

    // MARK: Helpers

    private static func head(_ contentType: String) -> HTTPResponse {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = contentType
        return head
    }

    /// Values (dictionary keys included) and the UTF-16 units of strings plus the bytes of data:
    /// never more than the scanner's count of bytes as stored.
    private static func size(of value: PropertyListValue) -> (nodes: Int, bytes: Int) {
        var nodes = 0
        var bytes = 0
        var pending = [value]
        while let next = pending.popLast() {
            nodes += 1
            switch next {
            case .array(let elements): pending += elements
            case .dictionary(let members):
                nodes += members.count
                bytes += members.keys.reduce(0) { $0 + $1.utf16.count }
                pending += members.values
            case .string(let string): bytes += string.utf16.count
            case .data(let data): bytes += data.count
            default: break
            }
        }
        return (nodes, bytes)
    }

    private static func count(_ value: JSONValue) -> Int {
        var count = 0
        var pending = [value]
        while let next = pending.popLast() {
            count += 1
            if case .array(let elements) = next { pending += elements }
            if case .object(let members) = next { pending += members.values }
        }
        return count
    }

    /// Equal, but for a double above 2⁵³ that `JSONDecoder` truncated to an integer.
    private static func matches(_ parsed: JSONValue, _ decoded: JSONValue) -> Bool {
        var pending = [(parsed, decoded)]
        while let (left, right) = pending.popLast() {
            switch (left, right) {
            case (.array(let a), .array(let b)):
                guard a.count == b.count else { return false }
                pending += zip(a, b).map { ($0, $1) }
            case (.object(let a), .object(let b)):
                guard a.count == b.count else { return false }
                for (key, value) in a {
                    guard let other = b[key] else { return false }
                    pending.append((value, other))
                }
            case (.double(let double), .integer):
                guard double.magnitude >= 0x1p53 else { return false }
            default:
                guard left == right else { return false }
            }
        }
        return true
    }
}
