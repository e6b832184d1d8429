import CurlewSerialization
import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A multipart file part streams from disk as curl asks for bytes: uploading a 1 GiB (sparse) file
/// barely moves the process's peak resident memory.
///
/// It runs in a child process (an exit test), so that nothing else in the process — other tests,
/// their servers and engines — moves the peak meanwhile. The child runs the server too (it parses
/// the body as it streams, without checksums so that a debug build receives 1 GiB in seconds), warms
/// up with a 1 MiB upload, resets the kernel's peak (`/proc/self/clear_refs`), uploads the whole
/// file and compares the peak with the resident size before. What it measured is printed.
///
/// Not part of the default run: the three uploads keep both cores of a CI machine busy for about
/// 12 s, which made an unrelated timing-bound test of the default suite fail (a 10 s server delay
/// elapsed before a cancellation got through). Run it alone, as `.ci/run` does:
/// `CURLEW_MEMORY_TESTS=1 swift test --filter MultipartMemoryTests`.
@Suite("Multipart: a 1 GiB file uploads with flat memory",
       .enabled(if: ProcessInfo.processInfo.environment["CURLEW_MEMORY_TESTS"] == "1",
                "uses both cores for about 12 s; run alone with CURLEW_MEMORY_TESTS=1"))
struct MultipartMemoryTests {
    static let fileSize: Int64 = 1 << 30
    static let allowedGrowth: Int64 = 32 << 20

    @Test("peak RSS grows by less than 32 MiB while a 1 GiB file part uploads", arguments: BackendConfiguration.allCases)
    func flatMemory(_ backend: BackendConfiguration) async {
        let name: String = backend.rawValue
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [name = name as String] in
            guard let backend = BackendConfiguration(rawValue: name) else { failChildProcess("unknown backend \(name)") }
            await Self.uploadAndMeasure(backend)
        }
        printStandardError(of: result)
    }

    /// In the child: upload, measure, and exit with a failure when memory grew too much.
    static func uploadAndMeasure(_ backend: BackendConfiguration) async {
        guard let server = try? TestServer.start() else { failChildProcess("no test server") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-rss-\(UUID().uuidString)")
        let file = directory.appendingPathComponent("sparse.bin")
        guard (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil,
              FileManager.default.createFile(atPath: file.path, contents: nil), truncate(file.path, off_t(Self.fileSize)) == 0
        else { failChildProcess("cannot make the sparse file") }
        defer { try? FileManager.default.removeItem(at: directory) }
        let engine = TransferEngine(scheduler: backend.makeScheduler())
        let url = server.url(.multipart(checksums: false))

        do {
            // Warm up the same path with 1 MiB of the file.
            var warmUp = MultipartFormData()
            try warmUp.append(fileAt: file, name: "file")
            var warmUpRequest = try HTTPRequestSerializer().multipartRequest(url: url, form: warmUp)
            warmUpRequest.body = .parts([.file(RequestBody.FileRegion(url: file, offset: 0, length: 1 << 20))])
            warmUpRequest.head.headerFields[.contentType] = "multipart/form-data; boundary=x"
            _ = try await engine.execute(warmUpRequest)

            var form = MultipartFormData()
            try form.append(Data("sparse".utf8), name: "title")
            try form.append(fileAt: file, name: "file")
            let request = try HTTPRequestSerializer().multipartRequest(url: url, form: form)

            guard let before = ProcessInspector.residentMemory(), ProcessInspector.resetPeakResidentMemory() else {
                failChildProcess("cannot read or reset the resident memory")
            }
            let start = ContinuousClock.now
            let response = try await engine.execute(request)
            let elapsed = ContinuousClock.now - start
            guard let after = ProcessInspector.residentMemory() else { failChildProcess("cannot read the resident memory") }

            let reply = try JSONDecoder().decode(MultipartEchoReply.self, from: response.body ?? Data())
            guard reply.error == nil, reply.parts.map(\.size) == [6, Int(Self.fileSize)],
                  reply.bodyLength == Int(form.contentLength) else { failChildProcess("the server saw \(reply)") }
            let growth = after.peak - before.current
            let line = "\(backend.rawValue): 1 GiB multipart upload in \(elapsed), resident before \(before.current >> 20) MiB, "
                + "peak \(after.peak >> 20) MiB, growth \(growth >> 10) KiB (limit \(Self.allowedGrowth >> 20) MiB)\n"
            FileHandle.standardError.write(Data(line.utf8))
            guard growth < Self.allowedGrowth else { failChildProcess("peak resident memory grew by \(growth >> 20) MiB") }
        } catch {
            failChildProcess("\(error)")
        }
        await engine.shutdown()
    }

}
