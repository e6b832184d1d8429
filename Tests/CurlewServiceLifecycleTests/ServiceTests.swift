import Curlew
import CurlewServiceLifecycle
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Logging
import ServiceLifecycle
import Testing

/// The manager as a swift-service-lifecycle `Service` in a `ServiceGroup`: a graceful shutdown drains
/// what runs, a cancellation cancels it, on every backend.
@Suite("RequestOperationManager as a Service")
struct ManagerServiceTests {
    static let server: Result<TestServer, any Error> = Result { try TestServer.start() }

    /// Runs `body` with a manager on a new engine of `backend`, inside a running `ServiceGroup` of its
    /// own; afterwards checks that the group has returned and the engine holds nothing.
    func withService(
        _ backend: BackendConfiguration,
        _ body: (RequestOperationManager, ServiceGroup, Task<Void, any Error>, AttemptCounter) async throws -> Void
    ) async throws {
        let engine = TransferEngine(scheduler: backend.makeScheduler())
        let attempts = AttemptCounter()
        let api = RequestOperationManager(baseURL: try Self.server.get().baseURL, engine: engine, monitors: [attempts])
        let group = ServiceGroup(services: [api], logger: Logger(label: "curlew.tests", factory: { _ in SwiftLogNoOpLogHandler() }))
        let running = Task { try await group.run() }
        do {
            try await body(api, group, running, attempts)
        } catch {
            running.cancel()
            await engine.shutdown()
            throw error
        }
        _ = try? await running.value
        #expect(await engine.diagnostics().liveTransfers == 0)
        await engine.shutdown()
    }

    /// Waits until the manager refuses new requests (it is draining or shut down).
    func waitUntilRefusing(_ api: RequestOperationManager) async -> Bool {
        await waitUntil {
            do {
                _ = try await api.get("echo", as: Data.self)
                return false
            } catch let error as TransferError {
                return error.code == .cancelled
            } catch {
                return false
            }
        }
    }

    @Test("a graceful shutdown lets requests in flight finish, refuses new ones, then shuts the manager down",
          arguments: BackendConfiguration.allCases)
    func gracefulShutdownDrains(_ backend: BackendConfiguration) async throws {
        try await withService(backend) { api, group, running, attempts in
            let body = HeldBody()
            let upload = Task { try await api.upload(body.chunks, to: "echo", as: EchoReply.self) }
            let operationBody = HeldBody()
            var request = try api.request(.post, "echo")
            request.body = .stream(RequestBodyStream(operationBody.chunks))
            let probe = HandlerProbe()
            api.operationQueue.addOperation(api.operation(with: request, success: probe.success, failure: probe.failure))
            #expect(await waitUntil { attempts.started.value == 2 }, "both requests are in flight")

            await group.triggerGracefulShutdown()
            #expect(await self.waitUntilRefusing(api))
            body.release()
            operationBody.release()
            let echo = try await upload.value
            #expect(echo.bodyLength == 2048, "a request in flight finishes as it would have")
            #expect(await probe.waitForOneCall().successes == 1, "so does an operation")
            try await running.value
        }
    }

    @Test("cancelling the group while the manager drains cancels what still runs", arguments: BackendConfiguration.allCases)
    func cancellationCancels(_ backend: BackendConfiguration) async throws {
        try await withService(backend) { api, group, running, attempts in
            let body = HeldBody()
            let upload = Task { try await api.upload(body.chunks, to: "echo", as: EchoReply.self) }
            #expect(await waitUntil { attempts.started.value == 1 }, "the request is in flight")
            await group.triggerGracefulShutdown()
            #expect(await self.waitUntilRefusing(api))
            running.cancel()
            do {
                _ = try await upload.value
                Issue.record("a request still in flight when the group was cancelled finished")
            } catch let error as TransferError {
                #expect(error.code == .cancelled)
            }
            _ = try? await running.value
            body.release()
        }
    }
}

/// Counts the attempts the manager started.
final class AttemptCounter: EventMonitor {
    let started = Locked(0)

    func request(_ request: MonitoredRequest, didStart attempt: RequestAttempt) {
        self.started.withLock { $0 += 1 }
    }
}

/// What AFNetworking-style handlers received.
final class HandlerProbe: Sendable {
    struct Record: Sendable {
        var successes = 0
        var failures = 0
    }

    let record = Locked(Record())

    var success: @Sendable (RequestOperation, (any Sendable)?) -> Void {
        { [record] _, _ in record.withLock { $0.successes += 1 } }
    }

    var failure: @Sendable (RequestOperation?, any Error) -> Void {
        { [record] _, _ in record.withLock { $0.failures += 1 } }
    }

    /// Waits for one handler call.
    func waitForOneCall() async -> Record {
        _ = await waitUntil { self.record.withLock { $0.successes + $0.failures >= 1 } }
        return self.record.value
    }
}
