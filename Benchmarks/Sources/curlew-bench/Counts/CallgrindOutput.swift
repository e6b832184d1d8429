/// What the runner reads from callgrind: the total instruction count of an output file, and the
/// functions with the highest self cost from `callgrind_annotate --inclusive=no`.
enum CallgrindOutput {
    /// The `totals:` (or `summary:`) line of a `callgrind.out` file: instructions executed.
    static func totalInstructions(in text: String) -> Int64? {
        for line in text.split(separator: "\n").reversed() {
            for prefix in ["totals:", "summary:"] where line.hasPrefix(prefix) {
                if let value = line.dropFirst(prefix.count).split(separator: " ").first.flatMap({ Int64($0) }) {
                    return value
                }
            }
        }
        return nil
    }

    /// One function's self cost.
    struct Function: Sendable, Hashable, Codable {
        var instructions: Int64
        var name: String
    }

    /// The functions of `callgrind_annotate` output, highest self cost first: each line that starts
    /// with an instruction count (`1,234,567 (12.34%)  file:function [object]`), the totals line excepted.
    static func functions(inAnnotation text: String) -> [Function] {
        var functions: [Function] = []
        for line in text.split(separator: "\n") {
            let trimmed = line.drop(while: { $0 == " " })
            guard let first = trimmed.split(separator: " ", maxSplits: 1).first,
                  let count = Int64(first.replacingOccurrences(of: ",", with: "")) else { continue }
            var rest = trimmed.dropFirst(first.count).drop(while: { $0 == " " })
            if rest.hasPrefix("(") { rest = rest.drop(while: { $0 != ")" }).dropFirst().drop(while: { $0 == " " }) }
            let name = String(rest)
            guard !name.isEmpty, !name.hasPrefix("PROGRAM TOTALS"), !name.hasPrefix("Total") else { continue }
            functions.append(Function(instructions: count, name: name))
        }
        return functions.sorted { $0.instructions > $1.instructions }
    }
}
