/// How a child process ended and what it left behind.
struct ProcessOutcome: Sendable {
    /// How the process ended.
    enum Termination: Sendable, Hashable, CustomStringConvertible {
        /// `exit(code)`.
        case exited(Int32)
        /// Killed by a signal.
        case signaled(Int32)

        var description: String {
            switch self {
            case .exited(let code): return "exit \(code)"
            case .signaled(let number): return "signal \(number)"
            }
        }
    }

    /// How the process ended.
    var termination: Termination
    /// Whether the runner killed it because it ran past its time limit.
    var timedOut: Bool
    /// Everything it wrote on stdout (empty when stdout was not a pipe).
    var standardOutput: [UInt8]
    /// Everything it wrote on stderr (empty when stderr was not a pipe).
    var standardError: [UInt8]
    /// The kernel's accounting for the whole process.
    var usage: ChildResourceUsage
    /// Most threads seen in `/proc/PID/task` (0 when not sampled).
    var threadsPeak: Int
    /// From spawn to reaping, seconds.
    var wallSeconds: Double

    /// Whether it exited 0 on its own.
    var succeeded: Bool { self.termination == .exited(0) && !self.timedOut }

    /// stdout as text (invalid UTF-8 repaired).
    var outputText: String { String(decoding: self.standardOutput, as: UTF8.self) }

    /// The last `lines` lines of stderr, for a failure reason.
    func errorTail(lines: Int = 5) -> String {
        let text = String(decoding: self.standardError, as: UTF8.self)
        let kept = text.split(separator: "\n", omittingEmptySubsequences: true).suffix(lines)
        return kept.joined(separator: " | ")
    }
}
