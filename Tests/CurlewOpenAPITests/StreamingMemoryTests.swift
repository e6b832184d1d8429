import Curlew
import CurlewOpenAPI
import CurlewTestServer
import CurlewTestSupport
import Foundation
import OpenAPIRuntime
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A response four times larger than the manager would hold in memory streams through the generated
/// client with the process's peak resident memory barely moving.
///
/// Each backend runs in a child process (an exit test), so that nothing else — other tests, their
/// servers and engines — moves the peak meanwhile. The child starts its own server, warms the path up
/// with 1 MiB, shows that the manager's buffered path refuses the body (its
/// `maximumInMemoryBodySize` is left at 64 MiB), resets the kernel's peak (`/proc/self/clear_refs`),
/// reads 256 MiB chunk by chunk — each byte compared with the server's pattern, nothing kept — and
/// compares the peak with the resident size before. What it measured is printed.
@Suite("OpenAPI transport: a 256 MiB response with flat memory")
struct StreamingMemoryTests {
    static let size: Int64 = 256 << 20
    static let allowedGrowth: Int64 = 32 << 20

    @Test("peak RSS grows by less than 32 MiB while 256 MiB stream through the generated client",
          arguments: BackendConfiguration.allCases)
    func flatMemory(_ backend: BackendConfiguration) async {
        let name: String = backend.rawValue
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [name = name as String] in
            guard let backend = BackendConfiguration(rawValue: name) else { Self.fail("unknown backend \(name)") }
            await Self.streamAndMeasure(backend)
        }
        printStandardError(of: result)
    }

    /// In the child: stream, measure, and exit with a failure when memory grew too much.
    static func streamAndMeasure(_ backend: BackendConfiguration) async {
        guard let server = try? TestServer.start() else { Self.fail("no test server") }
        let engine = TransferEngine(scheduler: backend.makeScheduler())
        let manager = RequestOperationManager(baseURL: server.baseURL, engine: engine)
        let client = Client(serverURL: server.baseURL, transport: CurlewClientTransport(manager: manager))
        do {
            guard manager.transferOptions.maximumInMemoryBodySize == 64 << 20 else { Self.fail("the in-memory limit moved") }
            _ = try await Self.read(client, count: 1 << 20)
            do {
                _ = try await manager.get("bytes/\(Self.size)", as: Data.self)
                Self.fail("the manager buffered \(Self.size >> 20) MiB past its in-memory limit")
            } catch let error as TransferError where error.code == .responseTooLarge {
                // The buffered path refuses what the streamed one reads below.
            }

            guard let before = ProcessInspector.residentMemory(), ProcessInspector.resetPeakResidentMemory() else {
                Self.fail("cannot read or reset the resident memory")
            }
            let start = ContinuousClock.now
            let (check, chunks) = try await Self.read(client, count: Self.size)
            let elapsed = ContinuousClock.now - start
            guard let after = ProcessInspector.residentMemory() else { Self.fail("cannot read the resident memory") }
            guard check.count == Self.size, check.matches else {
                Self.fail("read \(check.count) bytes, pattern \(check.matches ? "matched" : "did not match")")
            }
            let growth = after.peak - before.current
            let line = "\(backend.rawValue): \(Self.size >> 20) MiB through the generated client in \(elapsed), \(chunks) chunks, "
                + "resident before \(before.current >> 20) MiB, peak \(after.peak >> 20) MiB, growth \(growth >> 10) KiB "
                + "(limit \(Self.allowedGrowth >> 20) MiB)\n"
            FileHandle.standardError.write(Data(line.utf8))
            guard growth < Self.allowedGrowth else { Self.fail("peak resident memory grew by \(growth >> 20) MiB") }
        } catch {
            Self.fail("\(error)")
        }
        await manager.shutdown()
        await engine.shutdown()
    }

    /// Reads `/bytes/count` through the generated client, checking each chunk and keeping none.
    private static func read(_ client: Client, count: Int64) async throws -> (PatternCheck, Int) {
        let body = try await client.getBytes(path: .init(count: count)).ok.body.binary
        var check = PatternCheck()
        var chunks = 0
        for try await chunk in body {
            check.check(chunk)
            chunks += 1
        }
        return (check, chunks)
    }

    /// Ends the child process with a message.
    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("StreamingMemoryTests: \(message)\n".utf8))
        exit(1)
    }
}
