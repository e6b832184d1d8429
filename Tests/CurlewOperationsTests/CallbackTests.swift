import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import HTTPTypes
import Testing

/// Where each callback runs: serialization on the processing queue (never the network context),
/// handlers on the completion queue inside the completion group, notifications and progress on
/// their queues, none of them on the main queue by default.
@Suite("RequestOperation: callbacks")
struct CallbackTests {
    @Test("serialization runs on the processing queue; handlers and notifications on the chosen queues",
          arguments: BackendConfiguration.allCases)
    func queues(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let operation = RequestOperation(request: try TransferRequest.get(.bytes(500)), engine: engine)
            let serializer = RecordingSerializer(engine)
            operation.responseSerializer = serializer
            let completion = MarkedQueue("completion")
            let notifications = MarkedQueue("notifications")
            let probe = OperationProbe(operation, completionQueue: completion, notificationQueue: notifications)
            operation.start()
            let record = await probe.expectFinishedOnce()
            let seen = serializer.seen.value
            #expect(seen.count == 1)
            #expect(seen.first?.onContext == false, "serialized on the network context")
            #expect(seen.first?.queueLabel == "curlew.operation.processing")
            #expect(record.object as? Int == 500)
            #expect(operation.responseObject as? Int == 500)
        }
    }

    /// A slow or blocked serializer holds its processing queue; the responses that arrive once it
    /// has run for ``ProcessingQueues/slowBlock`` go to another. (Handed out in turn, every fourth
    /// response would wait behind it.) One backend at a time: each case blocks a shared queue.
    @Test("a blocked serializer holds up no response that arrives after it has run a while",
          .serialized, arguments: BackendConfiguration.allCases)
    func blockedSerializer(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let blocked = BlockingSerializer()
            defer { blocked.release.signal() }
            let first = RequestOperation(request: try TransferRequest.get(.bytes(10)), engine: engine)
            first.responseSerializer = blocked
            first.start()
            #expect(await waitUntil { blocked.entered.value })
            let slow = DispatchTime.now().uptimeNanoseconds + 2 * ProcessingQueues.slowBlock
            #expect(await waitUntil { DispatchTime.now().uptimeNanoseconds > slow })

            let others = try (0..<8).map { _ in RequestOperation(request: try TransferRequest.get(.bytes(10)), engine: engine) }
            for operation in others { operation.start() }
            #expect(await waitUntil { others.allSatisfy(\.isFinished) })
            #expect(!first.isFinished, "the blocked serializer is still running")
            let firstQueue = first.processingQueue
            #expect(firstQueue != nil)
            #expect(others.allSatisfy { $0.processingQueue != nil && $0.processingQueue !== firstQueue })
            #expect(others.allSatisfy { $0.responseData == Data(TestServer.expectedBody(count: 10)) })

            blocked.release.signal()
            #expect(await waitUntil { first.isFinished })
            #expect(first.responseData == Data(TestServer.expectedBody(count: 10)))
        }
    }

    @Test("a serializer that throws makes the operation fail with its error", arguments: BackendConfiguration.allCases)
    func serializerError(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let operation = RequestOperation(request: try TransferRequest.get(.status(404)), engine: engine)
            operation.responseSerializer = StatusValidatingSerializer()
            let probe = OperationProbe(operation)
            operation.start()
            let record = await probe.expectFinishedOnce()
            #expect(record.failures == 1)
            #expect(record.error as? UnacceptableStatus == UnacceptableStatus(code: 404))
            #expect(operation.error as? UnacceptableStatus == UnacceptableStatus(code: 404))
            #expect(operation.response?.head.status.code == 404, "the response is kept")
            #expect(operation.responseObject == nil)
            await #expect(throws: UnacceptableStatus(code: 404)) { try await bounded { try await operation.responseObject() } }
        }
    }

    /// The group is entered before `isFinished` is posted and left after the handler, so a
    /// dependant that waits on the group (a batch's final operation) runs its notify after every
    /// handler — here the handlers are held back on a suspended queue until the dependant ran.
    @Test("a dependant's group notify runs after every handler", arguments: BackendConfiguration.allCases)
    func completionGroup(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let group = DispatchGroup()
            let handlers = DispatchQueue(label: "handlers")
            handlers.suspend()
            let handled = Locked(0)
            let handledWhenDependantRan = Locked<Int?>(nil)
            let handledAtNotify = Locked<Int?>(nil)
            let operations = try (0..<5).map { _ in RequestOperation(request: try TransferRequest.get(.bytes(10)), engine: engine) }
            let dependant = BlockOperation {
                handledWhenDependantRan.set(handled.value)
                group.notify(queue: .global()) { handledAtNotify.set(handled.value) }
                handlers.resume()
            }
            for operation in operations {
                operation.completionGroup = group
                operation.completionQueue = handlers
                operation.setCompletionHandlers(success: { _, _ in handled.withLock { $0 += 1 } },
                                                failure: { _, _ in handled.withLock { $0 += 1 } })
                dependant.addDependency(operation)
            }
            operations[4].cancel()
            let queue = OperationQueue()
            queue.addOperation(dependant)
            for operation in operations { queue.addOperation(operation) }
            #expect(await waitUntil { handledAtNotify.value != nil })
            #expect(handledWhenDependantRan.value == 0, "the handlers were held back")
            #expect(handledAtNotify.value == 5)
        }
    }

    @Test("progress: on the chosen queue, in order, coalesced for a slow handler", arguments: BackendConfiguration.allCases)
    func downloadProgress(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let route = Route.bytes(2_000_000, chunked: true)
            let operation = RequestOperation(request: try TransferRequest.get(route), engine: engine)
            let progressQueue = MarkedQueue("progress", concurrent: true)
            operation.progressQueue = progressQueue.queue
            let seen = Locked<[Int64]>([])
            let offQueue = Locked(0)
            let inside = Locked(0)
            let overlapped = Locked(false)
            operation.downloadProgressHandler = { [weak operation] progress in
                if !progressQueue.isCurrent { offQueue.withLock { $0 += 1 } }
                if inside.withLock({ $0 += 1; return $0 }) > 1 { overlapped.set(true) }
                let first = seen.withLock { seen -> Bool in
                    seen.append(progress.bytesReceived)
                    return seen.count == 1
                }
                // The first delivery is slow: it lasts until the whole body has arrived (the
                // transfer completes on the network context, which this does not hold up).
                if first { blockingWaitUntil { operation?.response != nil } }
                inside.withLock { $0 -= 1 }
            }
            let probe = OperationProbe(operation)
            operation.start()
            await probe.expectFinishedOnce()
            #expect(await waitUntil { seen.value.last == 2_000_000 })
            let values = seen.value
            #expect(values.count <= 3, "a slow handler must see the latest value, not a backlog: \(values.count) deliveries")
            #expect(values == values.sorted())
            #expect(offQueue.value == 0)
            #expect(!overlapped.value, "two deliveries ran at once")
        }
    }

    @Test("upload progress and the Foundation Progress", arguments: BackendConfiguration.allCases)
    func uploadProgress(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let body = Data(repeating: 7, count: 300_000)
            let url = try testServer().url(.echo)
            let operation = RequestOperation(request: TransferRequest(url: url, method: .post, body: .data(body)), engine: engine)
            let sent = Locked<Int64>(0)
            operation.uploadProgressHandler = { progress in sent.set(progress.bytesSent) }
            let progress = operation.progress
            #expect(progress.totalUnitCount == -1 || progress.fractionCompleted < 1)
            operation.start()
            _ = try await bounded { try await operation.responseObject() }
            #expect(await waitUntil { sent.value == 300_000 })
            #expect(progress.fractionCompleted == 1)
            #expect(operation.progress === progress)
        }
    }

    @Test("cancelling the Foundation Progress cancels the operation", arguments: BackendConfiguration.allCases)
    func progressCancels(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let url = try testServer().url(.delay(10_000))
            let operation = RequestOperation(request: TransferRequest(url: url), engine: engine)
            let probe = OperationProbe(operation)
            operation.start()
            operation.progress.cancel()
            await probe.expectFinishedOnce()
            #expect(probe.cancellation?.failingURL == url)
        }
    }

    /// Linux programs often never drain the main queue; by default nothing an operation does
    /// needs it. (`RequestOperation.defaultCallbackQueues = .main` restores AFNetworking's choice.)
    @Test("by default no callback runs on the main thread", arguments: BackendConfiguration.allCases)
    func notMain(_ backend: BackendConfiguration) async throws {
        try await withEngine(backend, in: IsolatedThreads.contexts) { engine in
            let operation = RequestOperation(request: try TransferRequest.get(.bytes(100_000)), engine: engine)
            let onMain = Locked(0)
            let finishNotified = Locked(false)
            let note: @Sendable () -> Void = { if Thread.isMainThread { onMain.withLock { $0 += 1 } } }
            operation.downloadProgressHandler = { _ in note() }
            operation.setCompletionHandlers(success: { _, _ in note() }, failure: { _, _ in note() })
            let token = NotificationCenter.default.addObserver(forName: RequestOperation.didFinishNotification,
                                                               object: nil, queue: nil) { notification in
                guard notification.object as? RequestOperation === operation else { return }
                note()
                finishNotified.set(true)
            }
            defer { NotificationCenter.default.removeObserver(token) }
            #expect(operation.completionQueue == nil)
            #expect(operation.notificationQueue.label != DispatchQueue.main.label)
            #expect(operation.progressQueue.label != DispatchQueue.main.label)
            operation.start()
            _ = try await bounded { try await operation.responseObject() }
            #expect(await waitUntil { finishNotified.value })
            #expect(onMain.value == 0)
            let main = CallbackQueues.main
            #expect([main.completion, main.notification, main.progress].allSatisfy { $0.label == DispatchQueue.main.label })
        }
    }
}

/// Notes where it ran; returns the body's length.
final class RecordingSerializer: ResponseSerializer {
    struct Seen: Sendable {
        var onContext: Bool
        var queueLabel: String
    }

    /// Marks the library's shared processing queue, so a serializer can tell it runs there.
    private static let processingQueueKey: DispatchSpecificKey<UInt8> = {
        let key = DispatchSpecificKey<UInt8>()
        for queue in RequestOperation.processingQueues { queue.setSpecific(key: key, value: 1) }
        return key
    }()

    let seen = Locked<[Seen]>([])
    private let scheduler: any TransferScheduler

    init(_ engine: TransferEngine) {
        self.scheduler = engine.scheduler
        _ = Self.processingQueueKey
    }

    func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> (any Sendable)? {
        let label = DispatchQueue.getSpecific(key: Self.processingQueueKey) != nil ? "curlew.operation.processing" : "elsewhere"
        let onContext = self.scheduler.isOnContext
        self.seen.withLock { $0.append(Seen(onContext: onContext, queueLabel: label)) }
        return body?.count
    }
}

struct UnacceptableStatus: Error, Equatable {
    var code: Int
}

/// Accepts 2xx only.
struct StatusValidatingSerializer: ResponseSerializer {
    func serialize(response: HTTPResponse, body: Data?, url: URL?) throws -> (any Sendable)? {
        guard response.status.kind == .successful else { throw UnacceptableStatus(code: response.status.code) }
        return body
    }
}
