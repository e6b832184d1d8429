import Curlew
import CurlewTestServer
import CurlewTestSupport
import Foundation
import Testing

/// Starting by hand and on queues: width, dependencies, waiting, async, destinations.
@Suite("RequestOperation: start and queues")
struct StartAndQueueTests {
    @Test("started by hand on a plain thread and waited for", arguments: BackendConfiguration.allCases)
    func startWithoutQueue(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let route = Route.bytes(10_000)
            let operation = RequestOperation(request: try TransferRequest.get(route), engine: engine)
            let probe = OperationProbe(operation)
            let waited = Locked<Bool?>(nil)
            let thread = Thread {
                operation.start()
                operation.waitUntilFinished()
                waited.set(operation.isFinished)
            }
            thread.start()
            #expect(await waitUntil { waited.value != nil })
            #expect(waited.value == true)
            let record = await probe.expectFinishedOnce()
            #expect(record.successes == 1)
            #expect(record.object as? Data == Data(try #require(route.expectedBody)))
            #expect(operation.responseData == Data(try #require(route.expectedBody)))
            #expect(operation.response?.head.status == .ok)
            #expect(operation.error == nil)
            #expect(!operation.isExecuting && operation.isFinished && !operation.isCancelled)
            #expect(record.notifications == [RequestOperation.didStartNotification, RequestOperation.didFinishNotification])
        }
    }

    /// With the context held nothing can finish, so the queue's width is visible: exactly
    /// `maxConcurrentOperationCount` operations execute, the rest wait, and all finish later.
    @Test("an OperationQueue runs at most maxConcurrentOperationCount at once", arguments: BackendConfiguration.allCases)
    func queueWidth(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 3
            let gate = await ContextGate.hold(engine)
            defer { gate.release() }
            let operations = try (0..<8).map { _ in RequestOperation(request: try TransferRequest.get(.bytes(100)), engine: engine) }
            let probes = operations.map { OperationProbe($0) }
            for operation in operations { queue.addOperation(operation) }
            #expect(await waitUntil { operations.filter(\.isExecuting).count == 3 })
            #expect(await holdsThroughout(.milliseconds(100)) {
                operations.filter(\.isExecuting).count == 3 && operations.allSatisfy { !$0.isFinished }
            })
            gate.release()
            for probe in probes { await probe.expectFinishedOnce() }
            #expect(operations.allSatisfy { $0.responseData?.count == 100 })
        }
    }

    @Test("a dependant starts only after its dependency finished", arguments: BackendConfiguration.allCases)
    func dependencies(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let queue = OperationQueue()
            let first = RequestOperation(request: try TransferRequest.get(.bytes(1_000)), engine: engine)
            let second = RequestOperation(request: try TransferRequest.get(.bytes(2_000)), engine: engine)
            second.addDependency(first)
            let sawBoth = Locked<Bool?>(nil)
            let last = BlockOperation {
                sawBoth.set(first.isFinished && second.isFinished && first.responseData?.count == 1_000)
            }
            last.addDependency(first)
            last.addDependency(second)
            let probes = [OperationProbe(first), OperationProbe(second)]

            let gate = await ContextGate.hold(engine)
            defer { gate.release() }
            for operation in [last, second, first] { queue.addOperation(operation) }
            #expect(await waitUntil { first.isExecuting })
            #expect(!second.isReady)
            #expect(await holdsThroughout(.milliseconds(100)) { !second.isExecuting && !second.isFinished && sawBoth.value == nil })
            gate.release()
            for probe in probes { await probe.expectFinishedOnce() }
            #expect(await waitUntil { sawBoth.value != nil })
            #expect(sawBoth.value == true)
        }
    }

    @Test("waitUntilAllOperationsAreFinished from a thread that is not the context", arguments: BackendConfiguration.allCases)
    func waitForAll(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 4
            let operations = try (0..<20).map { index in
                RequestOperation(request: try TransferRequest.get(.bytes(100 + index)), engine: engine)
            }
            let returned = Locked<Bool?>(nil)
            let thread = Thread {
                queue.addOperations(operations, waitUntilFinished: false)
                queue.waitUntilAllOperationsAreFinished()
                returned.set(operations.allSatisfy(\.isFinished))
            }
            thread.start()
            #expect(await waitUntil { returned.value != nil })
            #expect(returned.value == true)
            for (index, operation) in operations.enumerated() {
                #expect(operation.responseData?.count == 100 + index)
            }
        }
    }

    @Test("async: awaits the result of a queued operation", arguments: BackendConfiguration.allCases)
    func awaitResult(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let route = Route.bytes(3_000)
            let operation = RequestOperation(request: try TransferRequest.get(route), engine: engine)
            OperationQueue().addOperation(operation)
            let object = try await bounded { try await operation.responseObject() }
            #expect(object as? Data == Data(try #require(route.expectedBody)))
            // Once finished, it answers at once, as often as asked.
            #expect(try await bounded { try await operation.responseObject() } as? Data == object as? Data)
        }
    }

    @Test("async: cancelling the awaiting task cancels the operation", arguments: BackendConfiguration.allCases)
    func awaitCancelled(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            // Started and running: the operation is cancelled and finishes with the cancellation.
            let url = try testServer().url(.delay(10_000))
            let running = RequestOperation(request: TransferRequest(url: url), engine: engine)
            let probe = OperationProbe(running)
            running.start()
            let task = Task { try await running.responseObject() }
            #expect(await waitUntil { running.isExecuting })
            task.cancel()
            await #expect(throws: TransferError.self) { try await bounded { try await task.value } }
            let record = await probe.expectFinishedOnce()
            #expect(record.failures == 1)
            #expect(probe.cancellation?.failingURL == url)
            #expect(running.isCancelled)

            // Never started: the await ends at once, the operation is marked cancelled.
            let idle = RequestOperation(request: TransferRequest(url: url), engine: engine)
            let idleTask = Task { try await idle.responseObject() }
            idleTask.cancel()
            do {
                _ = try await bounded { try await idleTask.value }
                Issue.record("awaiting a cancelled task returned")
            } catch let error as TransferError {
                #expect(error.isCancellation(of: url))
            }
            #expect(idle.isCancelled && !idle.isFinished)
        }
    }

    @Test("the response body goes to a file", arguments: BackendConfiguration.allCases)
    func bodyToFile(_ backend: BackendConfiguration) async throws {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-op-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let route = Route.bytes(50_000)
            var fileRequest = try TransferRequest.get(route)
            fileRequest.destination = .file(destination)
            let operation = RequestOperation(request: fileRequest, engine: engine)
            operation.start()
            let object = try await bounded { try await operation.responseObject() }
            #expect(object == nil, "the data serializer has no body in memory to pass on")
            #expect(operation.response?.fileURL == destination)
            #expect(try Data(contentsOf: destination) == Data(try #require(route.expectedBody)))
        }
    }

    @Test("the umbrella's default engine runs on the dispatch scheduler, with its epoll source")
    func defaultEngine() async throws {
        #expect(Curlew.defaultEngine.scheduler.name == "dispatch-epoll")
        let operation = RequestOperation(request: try TransferRequest.get(.bytes(42)))
        #expect(operation.engine === Curlew.defaultEngine)
        operation.start()
        #expect(try await bounded { try await operation.responseObject() } as? Data == Data(TestServer.expectedBody(count: 42)))
    }
}
