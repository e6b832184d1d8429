import Foundation

extension ClientResult {
    /// The result of a client that cannot run `options.scenario`: nothing measured, `requests: 0`,
    /// and `note` saying why.
    public static func unsupported(_ options: BenchOptions, note: String) -> ClientResult {
        ClientResult(
            client: options.client, scenario: options.scenario.rawValue, concurrency: options.concurrency,
            requests: 0, errors: 0, elapsedSeconds: 0, bytesReceived: 0, latency: .zero, cpuUserMicros: 0,
            cpuSystemMicros: 0, maxRSSKiB: ResourceUsage.process().maxRSSKiB, threadsPeak: 0,
            voluntaryContextSwitches: 0, involuntaryContextSwitches: 0, note: note)
    }

    /// Prints the result as one line of JSON on stdout: the only thing a client prints there.
    public func printAsLine() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            var data = try encoder.encode(self)
            data.append(UInt8(ascii: "\n"))
            FileHandle.standardOutput.write(data)
        } catch {
            StandardError.write("cannot encode the result: \(error)")
        }
    }
}
