#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// The machine and software a run happened on, for the report's header and `results.json`.
struct MachineEnvironment: Codable, Sendable {
    /// When the run started (ISO 8601, UTC).
    var date: String
    /// The runner's command line as typed.
    var commandLine: String
    /// Online CPUs.
    var cores: Int
    /// `MemTotal` of `/proc/meminfo`, GiB.
    var memoryGiB: Double
    /// `model name` of `/proc/cpuinfo`.
    var cpuModel: String
    /// `uname -sr`, e.g. `Linux 6.1.0-18-amd64`.
    var kernel: String
    /// `PRETTY_NAME` of `/etc/os-release`.
    var operatingSystem: String
    /// First line of `swift --version`.
    var swift: String?
    /// `curl-config --version` (the libcurl the clients link).
    var libcurl: String?
    /// `nginx -v`.
    var nginx: String?
    /// `wrk -v` (up to its copyright notice).
    var wrk: String?
    /// How the benchmark products were built (`release` or `debug`, from the build folder's name).
    var build: String
    /// 1-, 5- and 15-minute load averages when the run started.
    var loadAverage: String

    /// Reads everything (runs a few `--version` commands: about a second).
    static func collect(commandLine: String) -> MachineEnvironment {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var name = utsname()
        uname(&name)
        let system = withUnsafeBytes(of: name.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let cpuInfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let memInfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let osRelease = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let loadAverage = ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "")
            .split(separator: " ").prefix(3).joined(separator: " ")
        let memoryKiB = Double(self.field("MemTotal", in: memInfo, separator: ":")?.split(separator: " ").first ?? "") ?? 0
        let wrk = CommandOutput.firstLine("wrk", ["-v"]).map { line in
            line.components(separatedBy: " Copyright").first ?? line
        }
        return MachineEnvironment(
            date: formatter.string(from: Date()),
            commandLine: commandLine,
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            memoryGiB: (memoryKiB / 1_048_576 * 10).rounded() / 10,
            cpuModel: self.field("model name", in: cpuInfo, separator: ":") ?? "unknown",
            kernel: "\(system) \(release)",
            operatingSystem: self.field("PRETTY_NAME", in: osRelease, separator: "=")?
                .trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? "unknown",
            swift: CommandOutput.firstLine("swift", ["--version"]),
            libcurl: CommandOutput.firstLine("curl-config", ["--version"]),
            nginx: CommandOutput.firstLine("nginx", ["-v"]).map {
                $0.replacingOccurrences(of: "nginx version: ", with: "")
            },
            wrk: wrk,
            build: ExecutableLookup.buildFolder.lastPathComponent,
            loadAverage: loadAverage
        )
    }

    /// The value of the first `name<separator>value` line of `text`, trimmed.
    private static func field(_ name: String, in text: String, separator: Character) -> String? {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: separator, maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { continue }
            return parts[1].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// One line for people: `2 cores · 23.4 GiB · Intel Xeon … · Linux 6.1 · Debian 12`.
    var machineLine: String {
        "\(self.cores) cores · \(Format.significant(self.memoryGiB)) GiB · \(self.cpuModel) · \(self.kernel) · \(self.operatingSystem)"
    }

    /// One line for people: versions.
    var versionsLine: String {
        [self.swift ?? "Swift: unknown", self.libcurl ?? "libcurl: unknown", self.nginx ?? "nginx: not installed",
         self.wrk ?? "wrk: not installed", "\(self.build) build"].joined(separator: " · ")
    }
}
