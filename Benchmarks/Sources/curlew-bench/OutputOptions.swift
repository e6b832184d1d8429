import ArgumentParser
import Foundation

/// Where the files go.
struct OutputOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Folder for results.md, results.csv, runs.csv, results.json and the SVG charts (default: Benchmarks/out/<timestamp>).", valueName: "dir"))
    var output: String?

    /// The output folder: `--output`, else `out/<timestamp>` in the Benchmarks package the runner was
    /// built from, else in the current folder.
    func folder(startedAt date: Date) -> String {
        if let output { return output }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH-mm-ss'Z'"
        let stamp = formatter.string(from: date)
        var directory = ExecutableLookup.buildFolder
        for _ in 0..<6 {
            let manifest = directory.appendingPathComponent("Package.swift").path
            if let text = try? String(contentsOfFile: manifest, encoding: .utf8), text.contains("CurlewBenchmarks") {
                return directory.appendingPathComponent("out").appendingPathComponent(stamp).path
            }
            directory = directory.deletingLastPathComponent()
        }
        let current = FileManager.default.currentDirectoryPath
        if FileManager.default.fileExists(atPath: current + "/Benchmarks/Package.swift") {
            return current + "/Benchmarks/out/" + stamp
        }
        return current + "/curlew-bench-out/" + stamp
    }
}
