import Curlew
import CurlewTestServer
import CurlewTestSupport
import Dispatch
import Foundation
import Testing

/// The operation tests' own network contexts (network threads live as long as the process): some
/// tests here hold the context on purpose (`ContextGate`).
enum IsolatedThreads {
    static let contexts = PrivateContexts(name: "OpsTests")
}

/// Records what one operation reports: its handlers (and where they ran), its `completionBlock`,
/// and its notifications.
final class OperationProbe: Sendable {
    struct Record: Sendable {
        var successes = 0
        var failures = 0
        var object: (any Sendable)?
        var error: (any Error)?
        var handlerOffQueue = 0
        var handlerOnContext = 0
        var handlerSawUnfinished = 0
        var completionBlocks = 0
        var completionBlockSawUnfinished = 0
        var notifications: [Notification.Name] = []
        var notificationOffQueue = 0
    }

    let record = Locked(Record())
    private let observers: ObserverTokens
    private let transport: any TransferRunning
    private let completionQueue: DispatchQueue?
    private let notificationQueue: DispatchQueue

    /// Attaches to `operation`: handlers (checked to run on `completionQueue` when given),
    /// a `completionBlock`, and notification observers (checked to run on `notificationQueue`).
    init(_ operation: RequestOperation, completionQueue: MarkedQueue? = nil, notificationQueue: MarkedQueue? = nil) {
        let record = self.record
        let scheduler = operation.engine?.scheduler
        @Sendable func noteHandler(_ operation: RequestOperation, _ change: (inout Record) -> Void) {
            let offQueue = completionQueue.map { !$0.isCurrent } ?? false
            let onContext = scheduler?.isOnContext ?? false
            let unfinished = !operation.isFinished
            record.withLock { record in
                change(&record)
                if offQueue { record.handlerOffQueue += 1 }
                if onContext { record.handlerOnContext += 1 }
                if unfinished { record.handlerSawUnfinished += 1 }
            }
        }
        if let completionQueue { operation.completionQueue = completionQueue.queue }
        operation.setCompletionHandlers(success: { operation, object in
            noteHandler(operation) {
                $0.successes += 1
                $0.object = object
            }
        }, failure: { operation, error in
            noteHandler(operation) {
                $0.failures += 1
                $0.error = error
            }
        })
        operation.completionBlock = { [weak operation] in
            let unfinished = !(operation?.isFinished ?? false)
            record.withLock {
                $0.completionBlocks += 1
                if unfinished { $0.completionBlockSawUnfinished += 1 }
            }
        }
        if let notificationQueue { operation.notificationQueue = notificationQueue.queue }
        let identity = ObjectIdentifier(operation)
        let names = [RequestOperation.didStartNotification, RequestOperation.didPauseNotification,
                     RequestOperation.didFinishNotification]
        let tokens = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                guard let object = note.object as? RequestOperation, ObjectIdentifier(object) == identity else { return }
                let offQueue = notificationQueue.map { !$0.isCurrent } ?? false
                record.withLock {
                    $0.notifications.append(name)
                    if offQueue { $0.notificationOffQueue += 1 }
                }
            }
        }
        self.observers = ObserverTokens(tokens: tokens)
        self.transport = operation.transport
        self.completionQueue = operation.completionQueue
        self.notificationQueue = operation.notificationQueue
    }

    deinit {
        for token in self.observers.tokens {
            NotificationCenter.default.removeObserver(token)
        }
    }

    var handlerCalls: Int { self.record.withLock { $0.successes + $0.failures } }

    /// Waits until the handler, the completion block and the did-finish notification all came.
    func waitForEverything(timeout: Duration = .seconds(60)) async -> Bool {
        await waitUntil(timeout: timeout) {
            self.record.withLock {
                $0.successes + $0.failures >= 1 && $0.completionBlocks >= 1
                    && $0.notifications.contains(RequestOperation.didFinishNotification)
            }
        }
    }

    /// Checks that everything came exactly once, in the right places, and returns the record.
    /// Counts after a settling barrier (``settle(sourceLocation:)``), so a late second call would be
    /// seen.
    @discardableResult
    func expectFinishedOnce(sourceLocation: SourceLocation = #_sourceLocation) async -> Record {
        #expect(await self.waitForEverything(), "the operation never completed", sourceLocation: sourceLocation)
        await self.settle(sourceLocation: sourceLocation)
        let record = self.record.value
        #expect(record.successes + record.failures == 1, "handlers ran \(record.successes + record.failures) times",
                sourceLocation: sourceLocation)
        #expect(record.completionBlocks == 1, "completionBlock ran \(record.completionBlocks) times", sourceLocation: sourceLocation)
        #expect(record.notifications.filter { $0 == RequestOperation.didFinishNotification }.count == 1,
                sourceLocation: sourceLocation)
        #expect(record.notifications.last == RequestOperation.didFinishNotification, "\(record.notifications)",
                sourceLocation: sourceLocation)
        #expect(record.handlerOffQueue == 0, "a handler ran off its completion queue", sourceLocation: sourceLocation)
        #expect(record.handlerOnContext == 0, "a handler ran on the network context", sourceLocation: sourceLocation)
        #expect(record.handlerSawUnfinished == 0, "a handler ran before isFinished", sourceLocation: sourceLocation)
        #expect(record.completionBlockSawUnfinished == 0, sourceLocation: sourceLocation)
        #expect(record.notificationOffQueue == 0, "a notification was posted off its queue", sourceLocation: sourceLocation)
        return record
    }

    /// A barrier: a later operation on the same transport, with the same completion and notification
    /// queues, runs to its end (handler and did-finish). Its transfer completed through the same
    /// context, and its handler and notification were queued after whatever the observed
    /// operation's finish had queued there (on a serial queue, they also ran after it).
    func settle(sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            let barrier = RequestOperation(request: try TransferRequest.get(.bytes(1)), transport: self.transport)
            barrier.completionQueue = self.completionQueue
            barrier.notificationQueue = self.notificationQueue
            let probe = OperationProbe(barrier)
            barrier.start()
            #expect(await probe.waitForEverything(), "the settling operation never finished", sourceLocation: sourceLocation)
        } catch {
            Issue.record(error, "no settling operation", sourceLocation: sourceLocation)
        }
    }

    /// The cancellation error of the one failure, if that is what it was.
    var cancellation: TransferError? {
        guard let error = self.record.value.error as? TransferError, error.code == .cancelled else { return nil }
        return error
    }
}

/// Notification observer tokens.
///
/// Safety: `@unchecked Sendable` because the tokens are immutable and only handed back to
/// `NotificationCenter.removeObserver(_:)`, which is thread-safe.
struct ObserverTokens: @unchecked Sendable {
    let tokens: [any NSObjectProtocol]
}
