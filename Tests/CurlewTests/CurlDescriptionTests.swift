import Curlew
import CurlewTesting
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// `curlDescription`: secrets redacted unless asked for, and a command that, run by the real `curl`,
/// sends what Curlew sends.
@Suite("curlDescription")
struct CurlDescriptionTests {
    @Test("the real curl CLI, running the description, gets the same echo as Curlew", arguments: BackendConfiguration.allCases)
    func sameEcho(_ backend: BackendConfiguration) async throws {
        try await withManager(backend) { api in
            var serializer = JSONRequestSerializer()
            try serializer.setBearerToken("t0ken")
            try serializer.setValue("it's \"quoted\"", forHeader: "X-Note")
            api.requestSerializer = serializer
            let request = try api.request(.post, "echo/curl?q=a%20b", parameters: ["name": "O'Brien", "tags": ["x", "y"]])

            let redacted = request.curlDescription
            #expect(redacted.contains("Authorization: <redacted>"))
            #expect(!redacted.contains("t0ken"))

            let fromCurlew = try await api.value(for: request, as: Echo.self)
            let command = request.curlDescription(revealingSecrets: true)
            let output = try await Self.run(command)
            let fromCurl = try JSONDecoder().decode(Echo.self, from: output)
            #expect(fromCurl.method == fromCurlew.method)
            #expect(fromCurl.path == fromCurlew.path && fromCurl.query == fromCurlew.query)
            #expect(fromCurl.bodyLength == fromCurlew.bodyLength && fromCurl.bodyChecksum == fromCurlew.bodyChecksum)
            #expect(Self.headerSet(fromCurl) == Self.headerSet(fromCurlew), "\(command)")
        }
    }

    @Test("bodies curl cannot take inline are read from standard input, and the command says so")
    func multipartNote() throws {
        let api = RequestOperationManager(baseURL: URL(string: "http://127.0.0.1:9/"), transport: StubTransport())
        api.credentials = TransferCredentials(user: "ada", password: "pw", schemes: .digest)
        var policy = SecurityPolicy.pinning([try #require(PublicKeyPin(base64SHA256: TestServer.serverPublicKeyPin))])
        policy.validatesCertificateChain = false
        api.securityPolicy = policy
        let request = try api.multipartRequest(.post, "upload", parameters: ["a": "b"]) { form in
            try form.append(Data([0, 1, 2]), name: "blob", fileName: "blob.bin")
        }
        let description = request.curlDescription
        #expect(description.contains("--data-binary @-"))
        #expect(description.contains("# the body, "))
        #expect(description.contains("--user 'ada:<redacted>'") && description.contains("--digest"))
        #expect(description.contains("--insecure") && description.contains("--pinnedpubkey 'sha256//"))
    }

    @Test("a header marked secret is redacted like Authorization, unless secrets are revealed")
    func secretHeader() throws {
        let api = RequestOperationManager(baseURL: URL(string: "http://127.0.0.1:9/"), transport: StubTransport())
        try api.requestSerializer.setValue("k3y", forSecretHeader: "X-API-Key")
        try api.requestSerializer.setValue("plain", forHeader: "X-Note")
        let request = try api.request(.get, "x")
        #expect(request.curlDescription.contains("-H 'X-API-Key: <redacted>'"), "\(request.curlDescription)")
        #expect(!request.curlDescription.contains("k3y"))
        #expect(request.curlDescription.contains("-H 'X-Note: plain'"))
        #expect(request.curlDescription(revealingSecrets: true).contains("-H 'X-API-Key: k3y'"))
    }

    /// Header fields as a multiset of lowercased names and values.
    static func headerSet(_ echo: Echo) -> [String: Int] {
        echo.headers.reduce(into: [:]) { counts, pair in
            counts["\(pair.first?.lowercased() ?? ""): \(pair.dropFirst().joined())", default: 0] += 1
        }
    }

    /// Runs `command` with `/bin/sh` on a thread of its own; returns its standard output.
    static func run(_ command: String) async throws -> Data {
        try await onThreadOfItsOwn {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            let output = Pipe()
            process.standardOutput = output
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CurlFailed(status: process.terminationStatus, command: command)
            }
            return data
        }
    }

    struct CurlFailed: Error {
        var status: Int32
        var command: String
    }
}
