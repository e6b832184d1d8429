import Foundation

/// Diagnostics go to stderr: stdout carries exactly one result line.
public enum StandardError {
    /// Writes `message` and a newline to stderr.
    public static func write(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
