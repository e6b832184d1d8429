// <DESC>
// Pause, resume and cancel a RequestOperation (claims 11 and 12 of Docs/Lessons.md). A download
// paused mid-body gives its connection back and keeps the bytes so far; resumed, it asks for the
// rest (`Range` with `If-Range`), and the body is byte-identical to one fetched in one go. A cancel
// fails the operation once with a cancellation error carrying the URL — also when it comes before
// the transfer exists on the context, and however many times it is called.
// </DESC>
import Curlew
import CurlewTestServer
import ExampleSupport
import Foundation

/// Counts one operation's did-finish notifications.
final class FinishCounter: Sendable {
    let count = Shared(0)
    private let token: Token

    /// Safety: `@unchecked Sendable` because the token is only handed back to `NotificationCenter`,
    /// which is thread-safe.
    struct Token: @unchecked Sendable {
        let token: any NSObjectProtocol
    }

    init(_ operation: RequestOperation) {
        let count = self.count
        self.token = Token(token: NotificationCenter.default.addObserver(
            forName: RequestOperation.didFinishNotification, object: operation, queue: nil) { _ in
            count.withLock { $0 += 1 }
        })
    }

    deinit {
        NotificationCenter.default.removeObserver(self.token.token)
    }
}

/// The request lines the wire tracer saw, credentials redacted (there are none here).
let requestHeads = Shared<[String]>([])
let tracer = WireTracer { _, event in
    if case .requestHead(let head) = event {
        let lines = head.split(separator: "\r\n").map(String.init)
        let shown = lines.filter { $0.hasPrefix("GET") || $0.hasPrefix("Range") || $0.hasPrefix("If-Range") }
        requestHeads.withLock { $0.append(shown.joined(separator: " | ")) }
    }
}

// The server holds the first request of a tag after its first 20,000 bytes until the client leaves
// (`holdFirst`), so the pause — asked from the progress handler, a hop away from the context — always
// lands mid-body, however busy the machine.
let route = Route.entity(bytes: 400_000, dripChunkSize: 20_000, dripIntervalMilliseconds: 50, holdFirst: true)
let expected = Data(route.expectedBody ?? [])

for backend in ExampleBackend.allCases {
    let engine = TransferEngine(scheduler: backend.makeScheduler(thread: "Pause.\(backend == .runLoopEpoll ? "epoll" : "cfsocket")"))

    // Claim 12: pause and resume.
    Report.section("\(backend.rawValue): pause mid-body, resume, compare (claim 12)")
    requestHeads.set([])
    let tag = UUID().uuidString
    var request = TransferRequest(url: server.url(route))
    request.options.wireTracer = tracer
    if let name = HTTPField.Name(TestServer.tagHeaderName) { request.head.headerFields[name] = tag }
    let operation = RequestOperation(request: request, engine: engine)
    operation.pause()
    let ignoredWhenReady = !operation.isPaused
    let pausedAt = Shared<Int64?>(nil)
    operation.progressQueue = DispatchQueue(label: "example.progress")
    operation.downloadProgressHandler = { [weak operation] progress in
        guard progress.bytesReceived > 0, let operation, !operation.isPaused, pausedAt.value == nil else { return }
        pausedAt.set(progress.bytesReceived)
        operation.pause()
    }
    operation.start()
    Waiting.until { operation.isPaused || operation.isFinished }
    let paused = operation.isPaused && !operation.isExecuting && !operation.isFinished
    // The paused transfer left its connection: the server sees the first request abandoned.
    Waiting.until { server.requests(tagged: tag).first?.outcome == .abandoned }
    let leftConnection = server.requests(tagged: tag).first?.outcome == .abandoned
    operation.downloadProgressHandler = nil
    operation.resume()
    operation.resume()  // not paused any more: ignored
    operation.waitUntilFinished()
    let body = operation.responseData ?? Data()
    let resumes = operation.response?.metrics.resumeCount ?? 0
    Report.say("pause() before start ignored: \(ignoredWhenReady); pause() asked at \(pausedAt.value ?? 0) bytes, paused: \(paused);"
        + " connection left: \(leftConnection); resumed \(resumes) time(s); \(body.count) bytes, identical to the resource: \(body == expected).")
    for head in requestHeads.value { Report.say("  request: \(head)") }
    Report.check(12, ignoredWhenReady && paused && leftConnection && resumes == 1 && body == expected
                 && requestHeads.value.count == 2 && requestHeads.value[1].contains("Range: bytes="),
                 "pause only acts on an executing operation and keeps its bytes; resume asks for the rest; the body is byte-identical")

    // Claim 11: cancel.
    Report.section("\(backend.rawValue): cancel (claim 11)")
    let slowURL = server.url(.delay(10_000))
    let running = RequestOperation(request: TransferRequest(url: slowURL), engine: engine)
    let runningFinishes = FinishCounter(running)
    running.start()
    usleep(100_000)
    running.cancel()
    running.cancel()
    running.waitUntilFinished()
    let runningError = running.error as? TransferError
    Report.say("A running GET of /delay/10000 cancelled twice: \(runningError.map { "\($0.code)" } ?? "no error"), failing URL"
        + " \(runningError?.failingURL == slowURL ? "= the request's" : "missing").")

    let raced = RequestOperation(request: TransferRequest(url: server.url(.bytes(10))), engine: engine)
    let racedFinishes = FinishCounter(raced)
    let release = DispatchSemaphore(value: 0)
    let held = Shared(false)
    engine.scheduler.perform {
        held.set(true)
        release.wait()
    }
    Waiting.until { held.value }
    raced.start()   // queued on the held context: the transfer does not exist there yet
    raced.cancel()  // queued behind it
    let notYet = !raced.isFinished
    release.signal()
    raced.waitUntilFinished()
    Report.say("start() then cancel() while the context was held (the transfer did not exist yet): finished only once the context ran:"
        + " \(notYet); \((raced.error as? TransferError).map { "\($0.code)" } ?? "no error").")

    let done = RequestOperation(request: TransferRequest(url: server.url(.bytes(10))), engine: engine)
    done.start()
    done.waitUntilFinished()
    done.cancel()
    Report.say("cancel() after the finish: isCancelled = \(done.isCancelled), error = \(done.error.map { "\($0)" } ?? "none").")
    Waiting.until(timeout: .seconds(5)) { runningFinishes.count.value >= 1 && racedFinishes.count.value >= 1 }
    let steady = Waiting.holds(throughout: .milliseconds(100)) { runningFinishes.count.value == 1 && racedFinishes.count.value == 1 }
    Report.check(11, runningError?.code == .cancelled && runningError?.failingURL == slowURL
                 && (raced.error as? TransferError)?.code == .cancelled && notYet
                 && !done.isCancelled && done.error == nil && steady,
                 "cancel fails the operation with a cancellation error carrying the URL, exactly once, also in the race; after the finish it does nothing")
    engine.shutDownAndWait()
}
Report.finish()
