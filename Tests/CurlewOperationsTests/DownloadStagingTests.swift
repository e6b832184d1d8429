import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

/// An operation streaming its body to a file replaces the destination only once it succeeded: the
/// status *and* its serializer's validation. Every other end — a refused status, a serializer that
/// throws, a cancel, a broken connection — leaves the destination as it was and no file of the
/// operation's (or the transfer's) beside it.
@Suite("RequestOperation: downloads all or nothing")
struct DownloadStagingTests {
    /// Runs an operation for `route` into `destination` with `serializer` and waits for its one finish.
    static func download(
        _ url: URL, to destination: URL, serializer: any ResponseSerializer, engine: TransferEngine,
        configure: (RequestOperation) -> Void = { _ in }
    ) async -> (RequestOperation, OperationProbe.Record) {
        let operation = RequestOperation(request: TransferRequest(url: url, destination: .file(destination)), engine: engine)
        operation.responseSerializer = serializer
        configure(operation)
        let probe = OperationProbe(operation)
        operation.start()
        return (operation, await probe.expectFinishedOnce())
    }

    /// Refuses every response, as a validation the caller asked for would.
    struct RefusingSerializer: ResponseSerializer {
        struct Refused: Error {}

        func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> Data {
            throw Refused()
        }
    }

    @Test("success replaces the destination; response.fileURL is the destination", arguments: BackendConfiguration.allCases)
    func success(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await DownloadFixture.withDestination { directory, destination in
            try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
                let (operation, record) = await Self.download(server.url(.bytes(300_000)), to: destination,
                                                              serializer: HTTPResponseSerializer(), engine: engine)
                #expect(record.successes == 1, "\(String(describing: record.error))")
                #expect(operation.response?.fileURL == destination)
                let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                #expect(names == ["body.bin"])
                #expect(try Data(contentsOf: destination) == Data(TestServer.expectedBody(count: 300_000)))
            }
        }
    }

    @Test("a refused status leaves an existing file, or none, as it was", arguments: BackendConfiguration.allCases)
    func refusedStatus(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        for existing in [true, false] {
            try await DownloadFixture.withDestination(existing: existing) { directory, destination in
                try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
                    let (operation, record) = await Self.download(server.url(.status(404)), to: destination,
                                                                  serializer: HTTPResponseSerializer(), engine: engine)
                    let error = try #require(record.error as? ResponseSerializationError, "\(String(describing: record.error))")
                    if case .unacceptableStatusCode(404) = error.reason {} else { Issue.record("\(error)") }
                    #expect(error.body.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("404") == true,
                            "the error body is attached: \(String(describing: error.body))")
                    #expect(operation.response?.fileURL == nil)
                    try DownloadFixture.expectUntouched(directory, destination, existing: existing)
                }
            }
        }
    }

    @Test("a serializer that refuses a 200 leaves the old bytes: the body was staged, then removed",
          arguments: BackendConfiguration.allCases)
    func refusedValidation(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await DownloadFixture.withDestination { directory, destination in
            try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
                let (operation, record) = await Self.download(server.url(.bytes(100_000)), to: destination,
                                                              serializer: RefusingSerializer(), engine: engine)
                #expect(record.error is RefusingSerializer.Refused, "\(String(describing: record.error))")
                #expect(operation.response?.fileURL == nil)
                try DownloadFixture.expectUntouched(directory, destination)
            }
        }
    }

    @Test("a cancel mid-body leaves the old bytes", arguments: BackendConfiguration.allCases)
    func cancelMidBody(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await DownloadFixture.withDestination { directory, destination in
            try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
                let received = Locked<Int64>(0)
                let request = TransferRequest(url: server.faultURL(.stallBody), destination: .file(destination))
                let operation = RequestOperation(request: request, engine: engine)
                operation.responseSerializer = HTTPResponseSerializer()
                operation.downloadProgressHandler = { progress in received.set(progress.bytesReceived) }
                let probe = OperationProbe(operation)
                operation.start()
                #expect(await waitUntil { received.value > 0 }, "no body byte arrived")
                operation.cancel()
                await probe.expectFinishedOnce()
                #expect(probe.cancellation != nil, "\(String(describing: probe.record.value.error))")
                try DownloadFixture.expectUntouched(directory, destination)
            }
        }
    }

    @Test("a connection closed mid-body leaves the old bytes", arguments: BackendConfiguration.allCases)
    func brokenMidBody(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await DownloadFixture.withDestination { directory, destination in
            try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
                let (_, record) = await Self.download(server.url(.closeMidBody(bytes: 1 << 20)), to: destination,
                                                      serializer: HTTPResponseSerializer(), engine: engine)
                #expect((record.error as? TransferError)?.code == .networkConnectionLost, "\(String(describing: record.error))")
                try DownloadFixture.expectUntouched(directory, destination)
            }
        }
    }

    @Test("retried 503s never reach the file; the last attempt's body does", arguments: BackendConfiguration.allCases)
    func retried(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        let key = uniqueKey("op-dl", backend)
        try await DownloadFixture.withDestination { directory, destination in
            try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
                let (operation, record) = await Self.download(
                    server.url(.flaky(key: key, failures: 2)), to: destination, serializer: HTTPResponseSerializer(),
                    engine: engine) { $0.retryPolicy = RetryPolicy(maximumAttempts: 3, initialBackoff: .milliseconds(5)) }
                #expect(record.successes == 1, "\(String(describing: record.error))")
                #expect(operation.attemptCount == 3)
                let echo = try JSONDecoder().decode(EchoReply.self, from: try Data(contentsOf: destination))
                #expect(echo.method == "GET")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["body.bin"])
            }
        }
    }

    @Test("a serializer that does not validate statuses keeps the request's: a 404 is its body, not the file",
          arguments: BackendConfiguration.allCases)
    func unvalidated(_ backend: BackendConfiguration) async throws {
        let server = try testServer()
        try await DownloadFixture.withDestination { directory, destination in
            try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
                let (operation, record) = await Self.download(server.url(.status(404)), to: destination,
                                                              serializer: DataResponseSerializer(), engine: engine)
                #expect(record.successes == 1)
                #expect((record.object as? Data).map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("404") == true)
                #expect(operation.response?.fileURL == nil)
                try DownloadFixture.expectUntouched(directory, destination)
            }
        }
    }
}
