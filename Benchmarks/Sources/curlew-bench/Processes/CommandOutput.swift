/// Runs a short command to completion and returns what it printed: for version strings and the like.
enum CommandOutput {
    /// stdout and stderr of `tool` (looked up on `PATH`) run with `arguments`, trimmed; nil when the tool is
    /// missing, cannot start, or does not finish within `timeoutSeconds`.
    static func run(_ tool: String, _ arguments: [String], timeoutSeconds: Double = 15) -> (output: String, error: String)? {
        let path = tool.hasPrefix("/") ? tool : ExecutableLookup.tool(tool)
        guard let path, let child = try? ChildProcess.spawn(executable: path, arguments: arguments) else { return nil }
        let outcome = child.wait(timeoutSeconds: timeoutSeconds, killGraceSeconds: 1)
        guard !outcome.timedOut else { return nil }
        return (
            outcome.outputText.trimmingWhitespace(),
            String(decoding: outcome.standardError, as: UTF8.self).trimmingWhitespace()
        )
    }

    /// The first line of what `tool` printed (stdout, else stderr), or nil.
    static func firstLine(_ tool: String, _ arguments: [String]) -> String? {
        guard let result = self.run(tool, arguments) else { return nil }
        let text = result.output.isEmpty ? result.error : result.output
        let line = text.split(separator: "\n").first.map(String.init)?.trimmingWhitespace()
        return line?.isEmpty == false ? line : nil
    }
}
