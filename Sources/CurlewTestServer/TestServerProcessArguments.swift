#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes `text` to stderr unbuffered (stdout stays reserved for the READY line).
func writeToStandardError(_ text: String) {
    _ = Array(text.utf8).withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// The command line of ``TestServer/runAsProcess(arguments:)``.
enum ProcessArguments {
    /// The configuration and whether to stop at end of stdin; exits 2 (with the usage) on a bad argument
    /// and 0 (after printing the usage) on `--help`.
    static func parse(_ arguments: [String], name: String) -> (TestServer.Configuration, watchStdin: Bool) {
        var configuration = TestServer.Configuration()
        var watchStdin = true
        var index = 0

        func fail(_ message: String) -> Never {
            writeToStandardError("\(name): \(message)\n\(TestServer.processUsage(name: name))\n")
            exit(2)
        }
        func value(for option: String, in range: ClosedRange<Int>) -> Int {
            index += 1
            guard index < arguments.count, let number = Int(arguments[index]), range.contains(number) else {
                fail("\(option) needs a number in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }

        while index < arguments.count {
            switch arguments[index] {
            case "--port": configuration.port = value(for: "--port", in: 0...65_535)
            case "--tls-port": configuration.tlsPort = value(for: "--tls-port", in: 0...65_535)
            case "--h2c-port": configuration.h2cPort = value(for: "--h2c-port", in: 0...65_535)
            case "--threads": configuration.eventLoopThreads = value(for: "--threads", in: 1...256)
            case "--max-streams":
                configuration.http2MaxConcurrentStreams = value(for: "--max-streams", in: 1...1_000_000)
            case "--no-tls": configuration.enableTLS = false
            case "--no-h2c": configuration.enableH2C = false
            case "--no-stdin": watchStdin = false
            case "--help", "-h":
                print(TestServer.processUsage(name: name))
                exit(0)
            default:
                fail("unknown argument '\(arguments[index])'")
            }
            index += 1
        }
        return (configuration, watchStdin)
    }
}
