import BenchKit
import Foundation

/// Reads a client's one JSON line (``ClientResult``) from its stdout, and checks that it answers the
/// question that was asked. Never traps: anything malformed becomes a reason for a failed row.
enum ClientOutputParser {
    /// The result on the last line of `output` that starts with `{`, checked against what was asked.
    static func parse(_ output: String, client: String, scenario: String, concurrency: Int) -> Result<ClientResult, ParseFailure> {
        let lines = output.split(whereSeparator: { $0 == "\n" || $0 == "\r" })
        guard let line = lines.last(where: { $0.trimmingWhitespaceSubstring().hasPrefix("{") }) else {
            let shown = output.trimmingWhitespace()
            return .failure(ParseFailure(
                reason: shown.isEmpty ? "printed no result line" : "no JSON result line on stdout: \(shown.prefix(120))"
            ))
        }
        let result: ClientResult
        do {
            result = try JSONDecoder().decode(ClientResult.self, from: Data(line.utf8))
        } catch {
            return .failure(ParseFailure(reason: "unreadable result line (\(Self.describe(error))): \(line.prefix(120))"))
        }
        if result.client != client {
            return .failure(ParseFailure(reason: "reported client '\(result.client)', expected '\(client)'"))
        }
        if result.scenario != scenario {
            return .failure(ParseFailure(reason: "reported scenario '\(result.scenario)', expected '\(scenario)'"))
        }
        if result.concurrency != concurrency {
            return .failure(ParseFailure(reason: "reported concurrency \(result.concurrency), expected \(concurrency)"))
        }
        if let problem = Self.implausibility(in: result) {
            return .failure(ParseFailure(reason: "implausible result: \(problem)"))
        }
        return .success(result)
    }

    /// Why a parse failed.
    struct ParseFailure: Error {
        /// For the report.
        var reason: String
    }

    /// Negative counts, non-finite times and the like, or nil.
    private static func implausibility(in result: ClientResult) -> String? {
        if result.requests < 0 || result.errors < 0 || result.errors > result.requests {
            return "requests \(result.requests), errors \(result.errors)"
        }
        if !result.elapsedSeconds.isFinite || result.elapsedSeconds < 0 {
            return "elapsedSeconds \(result.elapsedSeconds)"
        }
        let percentiles = [result.latency] + (result.mainThreadLateness.map { [$0] } ?? [])
        for value in percentiles.flatMap({ [$0.p50, $0.p90, $0.p99, $0.p999, $0.max] }) where !value.isFinite || value < 0 {
            return "a percentile is \(value)"
        }
        let counters = [result.bytesReceived, result.cpuUserMicros, result.cpuSystemMicros, result.maxRSSKiB,
                        result.voluntaryContextSwitches, result.involuntaryContextSwitches, Int64(result.threadsPeak)]
        if counters.contains(where: { $0 < 0 }) { return "a negative counter" }
        return nil
    }

    /// A short description of a decoding error (the field, not the whole context dump).
    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _):
            return "missing '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "bad '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
        case DecodingError.dataCorrupted(let context):
            return context.debugDescription
        default:
            return "\(error)"
        }
    }
}
