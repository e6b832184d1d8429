import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A file destination is all or nothing: it takes the whole body of a response whose status it
/// keeps (2xx by default), and any other end — an error status, a cancel, a broken connection, a
/// full disk — leaves it exactly as it was (absent, or its old bytes), with no temporary file beside it.
@Suite("Downloads: all or nothing")
struct DownloadReplacementTests {
    @Test("a 404 leaves an existing file's bytes and no temporary; its body's start is delivered",
          arguments: BackendConfiguration.allCases)
    func errorStatusKeepsFile(_ backend: BackendConfiguration) async throws {
        try await DownloadFixture.withDestination { directory, destination in
            try await withEngine(backend) { engine in
                var request = try TransferRequest.get(.status(404))
                request.destination = .file(destination)
                let response = try await engine.fetch(request)
                #expect(response.head.status.code == 404)
                #expect(response.fileURL == nil)
                #expect(response.body.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("404") == true,
                        "\(String(describing: response.body))")
                try DownloadFixture.expectUntouched(directory, destination)
            }
        }
    }

    @Test("a 404 leaves an absent destination absent", arguments: BackendConfiguration.allCases)
    func errorStatusLeavesNoFile(_ backend: BackendConfiguration) async throws {
        try await DownloadFixture.withDestination(existing: false) { directory, destination in
            try await withEngine(backend) { engine in
                var request = try TransferRequest.get(.status(503))
                request.destination = .file(destination)
                #expect(try await engine.fetch(request).fileURL == nil)
                try DownloadFixture.expectUntouched(directory, destination, existing: false)
            }
        }
    }

    @Test("a status the request keeps replaces the file, an error status too when asked for",
          arguments: BackendConfiguration.allCases)
    func keptStatusesReplace(_ backend: BackendConfiguration) async throws {
        try await DownloadFixture.withDestination { _, destination in
            try await withEngine(backend) { engine in
                var request = try TransferRequest.get(.bytes(100_000))
                request.destination = .file(destination)
                #expect(try await engine.fetch(request).fileURL == destination)
                #expect(try Data(contentsOf: destination) == Data(TestServer.expectedBody(count: 100_000)))

                var error = try TransferRequest.get(.status(404))
                error.destination = .file(destination)
                error.options.fileReplacementStatusCodes.insert(404)
                let response = try await engine.fetch(error)
                #expect(response.fileURL == destination && response.body == nil)
                #expect(String(decoding: try Data(contentsOf: destination), as: UTF8.self).hasPrefix("404"))
            }
        }
    }

    @Test("a cancel mid-body leaves the old bytes and no temporary", arguments: BackendConfiguration.allCases)
    func cancelMidBody(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await DownloadFixture.withDestination { directory, destination in
            try await withEngine(backend) { engine in
                let recorder = TransferRecorder(engine)
                // The head and 10 of 1,000 bytes, then silence: the body is under way until cancelled.
                let request = TransferRequest(url: server.faultURL(.stallBody), destination: .file(destination))
                let transfer = engine.makeTransfer(request, delegate: recorder)
                transfer.start()
                #expect(await waitUntil { recorder.events.value.progress.contains { $0.bytesReceived > 0 } },
                        "no body byte arrived")
                transfer.cancel()
                let result = try #require(await recorder.result())
                #expect(result.failureCode == .cancelled, "\(result)")
                try DownloadFixture.expectUntouched(directory, destination)
            }
        }
    }

    @Test("a connection closed mid-body leaves the old bytes and no temporary", arguments: BackendConfiguration.allCases)
    func brokenMidBody(_ backend: BackendConfiguration) async throws {
        try await DownloadFixture.withDestination { directory, destination in
            try await withEngine(backend) { engine in
                var request = try TransferRequest.get(.closeMidBody(bytes: 1 << 20))
                request.destination = .file(destination)
                #expect(try await engine.failure(request).code == .networkConnectionLost)
                try DownloadFixture.expectUntouched(directory, destination)
            }
        }
    }

    /// The largest file the child of ``diskFull(_:)`` may write.
    static let fileSizeLimit: rlim_t = 1 << 20

    @Test("a full disk (RLIMIT_FSIZE in a child process) fails with cannotWriteToFile and leaves the old bytes",
          arguments: BackendConfiguration.allCases)
    func diskFull(_ backend: BackendConfiguration) async {
        let name: String = backend.rawValue
        await #expect(processExitsWith: .success) { [name = name as String] in
            guard let backend = BackendConfiguration(rawValue: name) else { failChildProcess("unknown backend \(name)") }
            await Self.downloadPastTheFileSizeLimit(backend)
        }
    }

    /// In the child: files may grow to 1 MiB (a write beyond fails with `EFBIG`, `SIGXFSZ` being
    /// ignored), then a 4 MiB download onto an existing file must fail and leave it whole.
    static func downloadPastTheFileSizeLimit(_ backend: BackendConfiguration) async {
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: Self.fileSizeLimit, rlim_max: Self.fileSizeLimit)
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { failChildProcess("setrlimit: \(errno)") }
        guard let server = try? TestServer.start() else { failChildProcess("no test server") }
        let engine = TransferEngine(scheduler: backend.makeScheduler())
        do {
            try await DownloadFixture.withDestination { directory, destination in
                let request = TransferRequest(url: server.url(.bytes(4 << 20)), destination: .file(destination))
                do throws(TransferError) {
                    let response = try await engine.execute(request)
                    failChildProcess("the download succeeded past the limit: \(response.head.status)")
                } catch {
                    guard error.code == .cannotWriteToFile else { failChildProcess("expected cannotWriteToFile: \(error)") }
                }
                let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                guard names == ["body.bin"] else { failChildProcess("files left: \(names)") }
                guard try Data(contentsOf: destination) == DownloadFixture.oldBytes else { failChildProcess("the destination changed") }
            }
        } catch {
            failChildProcess("\(error)")
        }
        await engine.shutdown()
    }
}

extension Result where Failure == TransferError {
    /// The failure's code; `nil` for a success.
    var failureCode: TransferError.Code? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
