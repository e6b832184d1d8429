import Foundation

/// The facts an exit test's child process reports, as one `key=value` line on standard output that
/// the parent parses.
///
/// ```swift
/// let child = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
///     var facts = ChildFacts()
///     facts["threads"] = "1"
///     print(facts.line())
/// }
/// #expect(ChildFacts.parse(child?.standardOutputContent ?? [])["threads"] == "1")
/// ```
public struct ChildFacts: Sendable {
    /// Marks the line among whatever else the child prints.
    public static let marker = "CURLEW-CHILD-FACTS"
    private var pairs: [(String, String)] = []

    /// No facts yet.
    public init() {}

    /// The value of `key` (values contain no spaces).
    public subscript(key: String) -> String? {
        get { self.pairs.last { $0.0 == key }?.1 }
        set { self.pairs.append((key, (newValue ?? "").replacingOccurrences(of: " ", with: "_"))) }
    }

    /// The line to print.
    public func line() -> String {
        Self.marker + " " + self.pairs.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
    }

    /// The line to print when the child could not even run its checks.
    public func line(failing reason: String) -> String {
        var facts = self
        facts["failure"] = reason
        return facts.line()
    }

    /// The facts in a child's standard output.
    public static func parse(_ output: [UInt8]) -> [String: String] {
        let text = String(decoding: output, as: UTF8.self)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix(Self.marker) }) else { return [:] }
        var facts: [String: String] = [:]
        for item in line.split(separator: " ").dropFirst() {
            let parts = item.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { facts[String(parts[0])] = String(parts[1]) }
        }
        return facts
    }
}
