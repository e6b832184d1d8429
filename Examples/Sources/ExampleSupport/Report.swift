import Foundation

/// What an example prints, in a shape its test can check.
///
/// - `== Title` starts a section;
/// - two spaces start a line of narrative or a measured figure (figures are printed, never judged:
///   they depend on the machine);
/// - `✔ [n] text` is claim `n` of the articles (`Docs/Lessons.md`), checked by the example on what
///   it just ran; `✘ [n] text` is a check that failed, and makes the example exit with status 1;
/// - `Linux: text` says where Linux or libcurl behaves differently from the articles' Darwin.
///
/// Output is flushed line by line, so a test that stops a hung example still sees how far it got.
public enum Report {
    private static let failures = Shared(0)

    /// Starts a section.
    public static func section(_ title: String) {
        self.emit("\n== \(title)")
    }

    /// A line of narrative, or a figure.
    public static func say(_ text: String) {
        self.emit("  \(text)")
    }

    /// Where Linux or libcurl differs from the articles' Darwin.
    public static func linux(_ text: String) {
        self.emit("Linux: \(text)")
    }

    /// Checks claim `claim` on what the example observed: `✔` when `holds`, else `✘` (and the
    /// example will exit with status 1).
    ///
    /// - Parameters:
    ///   - claim: The claim's number in `Docs/Lessons.md` (1–19).
    ///   - holds: What the example observed.
    ///   - text: The claim, as this example shows it.
    public static func check(_ claim: Int, _ holds: Bool, _ text: String) {
        if !holds { self.failures.withLock { $0 += 1 } }
        self.emit("\(holds ? "✔" : "✘") [\(claim)] \(text)")
    }

    /// Ends the example: status 0 when every check held, 1 otherwise.
    public static func finish() -> Never {
        let failed = self.failures.value
        if failed > 0 { self.emit("\n\(failed) check(s) failed") }
        exit(failed == 0 ? 0 : 1)
    }

    /// Ends the example at once with status 1, after printing why.
    public static func abort(_ reason: String) -> Never {
        self.emit("✘ \(reason)")
        exit(1)
    }

    /// Writes one line at once, unbuffered. A reader that went away (`| head`) is not an error.
    private static func emit(_ line: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
    }
}
