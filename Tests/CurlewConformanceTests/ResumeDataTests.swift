import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

/// A download cancelled with resume data continues in another engine — or another process — with a
/// range request for the same entity, and ends byte-identical; when the entity changed or the
/// partial file is gone, it starts over cleanly. The server's record of each tagged request shows
/// what was asked: the first one abandoned at the cancel, then the `Range` and `If-Range` of the
/// continuation, or none.
@Suite("Resume data")
struct ResumeDataTests {
    /// The first request of each test's tag stops after its first 100,000 bytes until the client
    /// leaves (`holdFirst`), so the cancel lands in the middle of a body still on its way.
    static let route = Route.entity(bytes: 400_000, dripChunkSize: 100_000, dripIntervalMilliseconds: 200, holdFirst: true)

    static func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("curlew-resume-\(UUID().uuidString)")
    }

    /// Starts a download of `route` to `destination` on `engine`, cancels it at its first body bytes
    /// producing resume data, and returns the data once the server saw the request abandoned.
    static func interruptedDownload(_ engine: TransferEngine, route: Route = Self.route, to destination: URL,
                                    tag: String) async throws -> ResumeData? {
        let server = try testServer()
        let produced = Locked<ResumeData??>(nil)
        let asked = Locked(false)
        let recorder = TransferRecorder(engine, onProgress: { transfer, _ in
            let first = asked.withLock { asked -> Bool in
                defer { asked = true }
                return !asked
            }
            if first { transfer.cancel(producingResumeData: { data in produced.set(.some(data)) }) }
        })
        var request = TransferRequest(url: server.url(route), destination: .file(destination))
        request = request.tagged(tag)
        engine.makeTransfer(request, delegate: recorder).start()
        let result = try #require(await recorder.result())
        #expect(result.failure?.code == .cancelled)
        #expect(await waitUntil { produced.value != nil }, "the resume data never came")
        #expect(await waitUntil { server.requests(tagged: tag).first?.outcome == .abandoned })
        await engine.settle()
        #expect(recorder.completionCount == 1)
        return produced.value ?? nil
    }

    /// Runs a transfer of `data`'s URL into its destination that resumes from `data`.
    static func resume(_ engine: TransferEngine, from data: ResumeData, tag: String) async throws
        -> (Result<TransferResponse, TransferError>, TransferRecorder) {
        let recorder = TransferRecorder(engine)
        let request = TransferRequest(url: data.url, destination: .file(data.destination)).tagged(tag)
        engine.makeTransfer(request, resumingFrom: data, delegate: recorder).start()
        let result = try #require(await recorder.result())
        await engine.settle()
        #expect(recorder.completionCount == 1)
        return (result, recorder)
    }

    @Test("another engine continues with a range request and the file is byte-identical",
          arguments: BackendConfiguration.allCases)
    func continuesInAnotherEngine(_ backend: BackendConfiguration) async throws {
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(at: destination) }
        let tag = UUID().uuidString
        var data: ResumeData?
        try await withEngine(backend) { engine in
            data = try await Self.interruptedDownload(engine, to: destination, tag: tag)
        }
        let kept = try #require(data)
        #expect(kept.bytesKept > 0 && kept.bytesKept <= 100_000)
        #expect(kept.entityTag == Self.route.entityETag)
        #expect(!FileManager.default.fileExists(atPath: destination.path), "a cancelled download replaced its destination")
        let partial = try FileManager.default.attributesOfItem(atPath: kept.partialFile.path)
        #expect((partial[.size] as? Int).map(Int64.init) == kept.bytesKept)
        // Through JSON, as it would be kept between runs.
        let decoded = try JSONDecoder().decode(ResumeData.self, from: try JSONEncoder().encode(kept))
        #expect(decoded == kept)

        try await withEngine(backend) { engine in
            let (result, recorder) = try await Self.resume(engine, from: decoded, tag: tag)
            let response = try result.get()
            #expect(response.fileURL == destination)
            #expect(response.head.status == .ok)
            #expect(try Data(contentsOf: destination) == Data(try #require(Self.route.expectedBody)))
            #expect(recorder.events.value.progress.first.map { $0.bytesReceived > kept.bytesKept } ?? false)
        }
        let requests = try testServer().requests(tagged: tag)
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.last?.range == "bytes=\(kept.bytesKept)-")
        #expect(requests.last?.ifRange == Self.route.entityETag)
        #expect(requests.last?.status == 206)
        #expect(!FileManager.default.fileExists(atPath: kept.partialFile.path), "the partial file stayed")
    }

    @Test("a changed entity or a missing partial file: the download starts over, the file is the server's entity",
          arguments: BackendConfiguration.allCases)
    func startsOver(_ backend: BackendConfiguration) async throws {
        for change in ["entity", "partial file"] {
            let destination = Self.destination()
            defer { try? FileManager.default.removeItem(at: destination) }
            let tag = UUID().uuidString
            try await withEngine(backend) { engine in
                var data = try #require(try await Self.interruptedDownload(engine, to: destination, tag: tag))
                if change == "entity" {
                    // As if the entity had been another when the first request was made.
                    data.entityTag = "\"v0\""
                    data.responseHead.headerFields[.eTag] = "\"v0\""
                } else {
                    try FileManager.default.removeItem(at: data.partialFile)
                }
                let (result, _) = try await Self.resume(engine, from: data, tag: tag)
                #expect(try result.get().fileURL == destination, "\(change)")
                #expect(try Data(contentsOf: destination) == Data(try #require(Self.route.expectedBody)), "\(change)")
                let last = try testServer().requests(tagged: tag).last
                #expect(last?.status == 200, "\(change): \(String(describing: last))")
                if change == "entity" {
                    #expect(last?.ifRange == "\"v0\"", "the old validator was sent and refused")
                } else {
                    #expect(last?.range == nil, "nothing to continue: no Range")
                }
                #expect(!FileManager.default.fileExists(atPath: data.partialFile.path))
            }
        }
    }

    @Test("no resume data from a body to memory or without a validator; the temporary file goes",
          arguments: BackendConfiguration.allCases)
    func noResumeData(_ backend: BackendConfiguration) async throws {
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(at: destination) }
        try await withEngine(backend) { engine in
            let unvalidated = Route.entity(bytes: 400_000, etag: nil, lastModified: false, dripChunkSize: 100_000,
                                           dripIntervalMilliseconds: 200, holdFirst: true)
            #expect(try await Self.interruptedDownload(engine, route: unvalidated, to: destination, tag: UUID().uuidString) == nil)
            let directory = destination.deletingLastPathComponent()
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasPrefix(".\(destination.lastPathComponent)") }
            #expect(leftovers.isEmpty, "\(leftovers)")

            let produced = Locked<[ResumeData?]>([])
            let recorder = TransferRecorder(engine, onProgress: { transfer, _ in
                transfer.cancel(producingResumeData: { data in produced.withLock { $0.append(data) } })
            })
            engine.makeTransfer(try .get(Self.route), delegate: recorder).start()
            #expect(try #require(await recorder.result()).failure?.code == .cancelled)
            #expect(await waitUntil { !produced.value.isEmpty })
            #expect(produced.value.allSatisfy { $0 == nil }, "resume data for a body in memory")
        }
    }

    @Test("a child process continues the download", arguments: BackendConfiguration.allCases)
    func continuesInAnotherProcess(_ backend: BackendConfiguration) async throws {
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(at: destination) }
        let tag = UUID().uuidString
        var produced: ResumeData?
        try await withEngine(backend) { engine in
            produced = try await Self.interruptedDownload(engine, to: destination, tag: tag)
        }
        let data = try #require(produced)
        let file = destination.appendingPathExtension("resume-data.json")
        defer { try? FileManager.default.removeItem(at: file) }
        try JSONEncoder().encode(data).write(to: file)

        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            [name = backend.rawValue as String, path = file.path as String, tag = tag as String] in
            await Self.resumeInChild(backend: name, resumeDataPath: path, tag: tag)
        }
        printStandardError(of: result)
        #expect(try Data(contentsOf: destination) == Data(try #require(Self.route.expectedBody)))
        let last = try testServer().requests(tagged: tag).last
        #expect(last?.range == "bytes=\(data.bytesKept)-" && last?.status == 206, "\(String(describing: last))")
    }

    /// In the child: reads the resume data, continues the download on a new engine, checks the file.
    static func resumeInChild(backend name: String, resumeDataPath: String, tag: String) async {
        guard let backend = BackendConfiguration(rawValue: name) else { failChildProcess("unknown backend \(name)") }
        guard let json = FileManager.default.contents(atPath: resumeDataPath),
              let data = try? JSONDecoder().decode(ResumeData.self, from: json) else { failChildProcess("unreadable resume data") }
        let engine = TransferEngine(scheduler: backend.makeScheduler())
        let recorder = TransferRecorder(engine)
        let request = TransferRequest(url: data.url, destination: .file(data.destination)).tagged(tag)
        engine.makeTransfer(request, resumingFrom: data, delegate: recorder).start()
        guard case .success(let response)? = await recorder.result() else { failChildProcess("the resumed download failed") }
        await engine.shutdown()
        guard response.fileURL == data.destination, let expected = Self.route.expectedBody,
              FileManager.default.contents(atPath: data.destination.path) == Data(expected) else {
            failChildProcess("the file is not the entity")
        }
    }
}

extension Result where Failure == TransferError {
    /// The error, when failed.
    var failure: TransferError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
