import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

/// Handlers for the library's default completion queue may run on the thread of the processing
/// queue that serialized the response (inside `sync` on the completion queue), when that queue can
/// hold them: then no other thread is woken for them. Whatever thread runs them, they run on the
/// completion queue, off the processing queue and the network context, and a handler that blocks
/// holds up no other operation's response.
@Suite("RequestOperation: handlers on the default completion queue")
struct DefaultCompletionQueueTests {
    /// Marks the default completion queue and the processing queues, so a handler can tell where it runs.
    private static let keys: (completion: DispatchSpecificKey<UInt8>, processing: DispatchSpecificKey<UInt8>) = {
        let completion = DispatchSpecificKey<UInt8>()
        RequestOperation.defaultCallbackQueues.completion.setSpecific(key: completion, value: 1)
        let processing = DispatchSpecificKey<UInt8>()
        for queue in RequestOperation.processingQueues { queue.setSpecific(key: processing, value: 1) }
        return (completion, processing)
    }()

    struct Where: Sendable, Equatable {
        var onCompletionQueue: Bool
        var onProcessingQueue: Bool
        var onContext: Bool
    }

    @Test("success and failure handlers run on the default completion queue, nowhere else",
          arguments: BackendConfiguration.allCases)
    func onTheCompletionQueue(_ backend: BackendConfiguration) async throws {
        let keys = Self.keys
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let seen = Locked<[Where]>([])
            let note: @Sendable () -> Void = {
                let here = Where(onCompletionQueue: DispatchQueue.getSpecific(key: keys.completion) != nil,
                                 onProcessingQueue: DispatchQueue.getSpecific(key: keys.processing) != nil,
                                 onContext: engine.scheduler.isOnContext)
                seen.withLock { $0.append(here) }
            }
            let operations = try [Route.bytes(10), .status(404), .bytes(20), .status(500)].map { route in
                let operation = RequestOperation(request: try TransferRequest.get(route), engine: engine)
                operation.responseSerializer = StatusValidatingSerializer()
                operation.setCompletionHandlers(success: { _, _ in note() }, failure: { _, _ in note() })
                return operation
            }
            for operation in operations { operation.start() }
            #expect(await waitUntil { seen.value.count == operations.count })
            #expect(seen.value == Array(repeating: Where(onCompletionQueue: true, onProcessingQueue: false, onContext: false),
                                        count: operations.count))
            #expect(operations.map { $0.error == nil } == [true, false, true, false])
        }
    }

    /// As many handlers as there are processing queues block until a later operation has finished.
    /// Were each of them to hold its processing queue's thread with responses able to queue behind
    /// it, the later response would wait for them and they for it, for ever.
    @Test("handlers that block until a later operation finishes hold up no response",
          arguments: BackendConfiguration.allCases)
    func blockingHandlers(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let last = RequestOperation(request: try TransferRequest.get(.bytes(10)), engine: engine)
            let entered = Locked(0)
            let sawLastFinish = Locked<[Bool]>([])
            let blocking = try (0..<RequestOperation.processingQueues.count).map { _ in
                let operation = RequestOperation(request: try TransferRequest.get(.bytes(10)), engine: engine)
                operation.setCompletionHandlers(success: { _, _ in
                    entered.withLock { $0 += 1 }
                    let finished = blockingWaitUntil(timeout: .seconds(30)) { last.isFinished }
                    sawLastFinish.withLock { $0.append(finished) }
                }, failure: nil)
                return operation
            }
            for operation in blocking { operation.start() }
            #expect(await waitUntil { entered.value == blocking.count }, "not every handler ran")
            last.start()
            #expect(await waitUntil { last.isFinished }, "the later response waited for the blocked handlers")
            #expect(await waitUntil { sawLastFinish.value.count == blocking.count })
            #expect(sawLastFinish.value.allSatisfy { $0 })
            #expect(last.responseData == Data(TestServer.expectedBody(count: 10)))
        }
    }
}
