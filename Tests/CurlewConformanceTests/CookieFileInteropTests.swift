import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// A cookie file is shared with the `curl` command both ways: a jar Curlew saved is what `curl -b`
/// sends, and a file `curl -c` wrote is what Curlew sends — against the test server, whose `/echo`
/// shows the `Cookie` field it received.
@Suite("Cookie files and the curl command", .enabled(if: CurlCommand.path != nil, "no curl command"))
struct CookieFileInteropTests {

    /// Runs `curl -sS --noproxy '*' arguments…` and returns what it printed.
    static func curl(_ arguments: [String]) async throws -> Data {
        let command = try #require(CurlCommand.path)
        return try await onThreadOfItsOwn {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = ["-sS", "--noproxy", "*"] + arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw TransferError(.unknown, "curl exited with \(process.terminationStatus)")
            }
            return data
        }
    }

    @Test("a jar Curlew saved is sent by curl -b", arguments: BackendConfiguration.allCases)
    func savedByCurlew(_ backend: BackendConfiguration) async throws {
        let file = TemporaryFiles.cookieFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try testServer()
        let value = "curlew-\(UUID().uuidString.prefix(8))"
        try await withEngine(backend) { engine in
            let jar = try CookieJar(file: file)
            var request = TransferRequest(url: server.url(.setCookie(name: "session", value: value)))
            request.options.cookieJar = jar
            _ = try await engine.fetch(request)
            try jar.save()
        }
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int) == 0o600)
        let echo = try JSONDecoder().decode(EchoReply.self, from: try await Self.curl(["-b", file.path, server.url(.echo).absoluteString]))
        #expect(echo.headerValues("cookie") == ["session=\(value)"])
    }

    @Test("a file curl -c wrote is loaded and its cookies sent", arguments: BackendConfiguration.allCases)
    func writtenByCurl(_ backend: BackendConfiguration) async throws {
        let file = TemporaryFiles.cookieFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try testServer()
        let value = "curl-\(UUID().uuidString.prefix(8))"
        _ = try await Self.curl(["-c", file.path, "-o", "/dev/null", server.url(.setCookie(name: "fromcurl", value: value)).absoluteString])
        try await withEngine(backend) { engine in
            let jar = try CookieJar(file: file)
            #expect(jar.cookies.map(\.name) == ["fromcurl"])
            var request = TransferRequest(url: server.url(.echo))
            request.options.cookieJar = jar
            let echo = try EchoReply(try await engine.fetch(request))
            #expect(echo.headerValues("cookie") == ["fromcurl=\(value)"])
        }
    }
}

/// The `curl` command.
enum CurlCommand {
    /// The `curl` executable on the `PATH`, if any.
    static let path: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        .split(separator: ":").map { "\($0)/curl" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}
