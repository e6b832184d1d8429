import Curlew
import Dispatch
import Foundation
import HTTPTypes

/// A `TransferRunning` that answers from canned responses, without sockets: the stand-in for the
/// engine in unit tests of code built on Curlew.
///
/// Register replies by path (and, optionally, method), from text or from files; every request that
/// starts is recorded in ``requests`` (``requests(to:method:)`` picks those of one route). A request
/// nothing matches gets the fallback (a 404 by default).
///
/// ```swift
/// let stub = StubTransport()
/// stub.respond(to: "/v1/users/1", with: .json(#"{"id":1,"name":"Ada"}"#))
/// stub.respond(to: "/v1/users", method: .post, with: .json(#"{"id":2,"name":"Bob"}"#, status: 201))
/// stub.fail("/v1/flaky", with: TransferError(.timedOut, "simulated"), after: .milliseconds(50))
///
/// try await stub.withManager(baseURL: URL(string: "https://api.example.com/v1/")) { api in
///     let user = try await api.get("users/1", as: User.self)
///     #expect(stub.requests(to: "/v1/users/1").map(\.head.method) == [.get])
/// }
/// ```
///
/// It keeps the seam's contract: events are delivered on a serial queue of its own, never from
/// inside a control call; each started transfer completes exactly once; `cancel()` at any moment
/// before the reply completes it with a `TransferError/Code/cancelled` error at once (a delay
/// is a good way to test cancellation). `pause()` and `resume()` do nothing. A body for a request
/// whose destination is a file is written to that file (atomically) when the status is in the
/// request's `TransferOptions/fileReplacementStatusCodes`, and otherwise delivered in `body` as the
/// engine does, the file left as it was; one whose destination is a stream is handed to its consumer
/// in chunks, as it takes them. A streamed request body is not read.
public final class StubTransport: TransferRunning, Sendable {
    /// A canned response.
    public struct Response: Sendable, Hashable {
        /// The status code, 100 to 999 (anything else fails the transfer with
        /// `TransferError/Code/badServerResponse`).
        public var status: Int
        /// The header fields.
        public var headerFields: HTTPFields
        /// The body (sent for every method but HEAD).
        public var body: Data
        /// How long after `start()` the response arrives.
        public var delay: Duration

        /// Creates a response.
        ///
        /// - Parameters:
        ///   - status: The status code; 200 by default.
        ///   - headerFields: The header fields; none by default.
        ///   - body: The body; empty by default.
        ///   - delay: How long after `start()` it arrives; at once by default.
        public init(status: Int = 200, headerFields: HTTPFields = [:], body: Data = Data(), delay: Duration = .zero) {
            self.status = status
            self.headerFields = headerFields
            self.body = body
            self.delay = delay
        }

        /// A JSON body with `Content-Type: application/json`.
        public static func json(_ text: String, status: Int = 200, delay: Duration = .zero) -> Response {
            Response(status: status, headerFields: [.contentType: "application/json"], body: Data(text.utf8), delay: delay)
        }

        /// A text body with `Content-Type: text/plain; charset=utf-8`.
        public static func text(_ text: String, status: Int = 200, delay: Duration = .zero) -> Response {
            Response(status: status, headerFields: [.contentType: "text/plain; charset=utf-8"], body: Data(text.utf8), delay: delay)
        }

        /// A status with no body (a 204, a 404…).
        public static func status(_ code: Int, delay: Duration = .zero) -> Response {
            Response(status: code, delay: delay)
        }
    }

    /// What a matched request gets.
    public enum Reply: Sendable {
        /// A response, after its delay.
        case response(Response)
        /// A failed transfer, after `delay`.
        case failure(TransferError, delay: Duration)
    }

    private struct Route: Sendable {
        var path: String
        var method: HTTPRequest.Method?
        var reply: Reply
    }

    private struct State: Sendable {
        var routes: [Route] = []
        var fallback: Reply
        var requests: [TransferRequest] = []
    }

    private let state: Locked<State>
    /// Where every event of every transfer is delivered, in order.
    private let queue = DispatchQueue(label: "curlew.stub-transport")

    /// Creates a stub.
    ///
    /// - Parameter fallback: The reply to requests no route matches; a 404 by default.
    public init(fallback: Reply = .response(.status(404))) {
        self.state = Locked(State(fallback: fallback))
    }

    /// Answers requests whose path (without the query) is `path` with `response`. A later route for
    /// the same path and method replaces an earlier one.
    ///
    /// - Parameters:
    ///   - path: The request path, with its leading `/` (`"/v1/users/1"`).
    ///   - method: Only this method, or `nil` for any.
    ///   - response: The response.
    public func respond(to path: String, method: HTTPRequest.Method? = nil, with response: Response) {
        self.add(Route(path: path, method: method, reply: .response(response)))
    }

    /// Fails requests whose path is `path` with `error`, after `delay`.
    ///
    /// - Parameters:
    ///   - path: The request path, with its leading `/`.
    ///   - method: Only this method, or `nil` for any.
    ///   - error: The failure, e.g. `TransferError(.timedOut, "simulated")`.
    ///   - delay: How long after `start()` it fails.
    public func fail(_ path: String, method: HTTPRequest.Method? = nil, with error: TransferError, after delay: Duration = .zero) {
        self.add(Route(path: path, method: method, reply: .failure(error, delay: delay)))
    }

    /// Every request started so far, in order.
    public var requests: [TransferRequest] {
        self.state.withLock { $0.requests }
    }

    /// The requests started so far whose path (without the query) is `path`, in order: what a route
    /// registered with the same arguments answered.
    ///
    /// - Parameters:
    ///   - path: The request path, with its leading `/`.
    ///   - method: Only this method, or `nil` for any.
    public func requests(to path: String, method: HTTPRequest.Method? = nil) -> [TransferRequest] {
        self.requests.filter { Self.path(of: $0) == path && (method == nil || $0.head.method == method) }
    }

    private func add(_ route: Route) {
        self.state.withLock { state in
            state.routes.removeAll { $0.path == route.path && $0.method == route.method }
            state.routes.append(route)
        }
    }

    // MARK: TransferRunning

    /// Makes a transfer that answers `request` from the stub's replies once started: the reply
    /// registered last for the request's path and method (or for its path and any method), else the
    /// fallback.
    ///
    /// - Parameters:
    ///   - request: What the operation sends; it is recorded when the transfer starts.
    ///   - observer: Hears progress and exactly one completion, never from inside a control call.
    /// - Returns: The transfer, not started.
    public func makeTransfer(_ request: TransferRequest, observer: any TransferObserver) -> any TransferControl {
        StubTransfer(request: request, observer: observer, transport: self)
    }

    /// Records `request` and returns its reply.
    fileprivate func reply(for request: TransferRequest) -> Reply {
        let path = Self.path(of: request)
        return self.state.withLock { state in
            state.requests.append(request)
            let route = state.routes.last { $0.path == path && ($0.method == nil || $0.method == request.head.method) }
            return route?.reply ?? state.fallback
        }
    }

    /// The path routes are matched by: the request's, without the query.
    private static func path(of request: TransferRequest) -> String {
        (request.head.path ?? "/").split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first
            .map(String.init) ?? "/"
    }

    /// One transfer of the stub.
    private final class StubTransfer: TransferControl, Sendable {
        private enum Phase {
            case idle
            case running
            case finished
        }

        let request: TransferRequest
        /// Until the completion is delivered: then let go, since the observer usually holds the
        /// transfer (a cycle the engine's transfers break the same way).
        private let observer: Locked<(any TransferObserver)?>
        let transport: StubTransport
        private let phase = Locked(Phase.idle)
        /// A streamed body's bytes not yet taken by its consumer, and its completion.
        private let pending = Locked<(body: Data, offset: Int, completion: Result<TransferResponse, TransferError>)?>(nil)

        init(request: TransferRequest, observer: any TransferObserver, transport: StubTransport) {
            self.request = request
            self.observer = Locked(observer)
            self.transport = transport
        }

        /// Delivers the one completion and lets the observer go.
        private func completeObserver(with result: Result<TransferResponse, TransferError>) {
            let observer = self.observer.withLock { observer in
                defer { observer = nil }
                return observer
            }
            observer?.transferDidComplete(with: result)
        }

        func start() {
            let starts = self.phase.withLock { phase -> Bool in
                guard phase == .idle else { return false }
                phase = .running
                return true
            }
            guard starts else { return }
            let reply = self.transport.reply(for: self.request)
            let delay: Duration
            switch reply {
            case .response(let response): delay = response.delay
            case .failure(_, let failureDelay): delay = failureDelay
            }
            self.transport.queue.asyncAfter(deadline: .now() + Self.interval(delay)) {
                self.deliver(reply)
            }
        }

        func cancel() {
            let cancels = self.phase.withLock { phase -> Bool in
                guard phase == .running else { return false }
                phase = .finished
                return true
            }
            guard cancels else { return }
            let error = TransferError.cancelled(url: self.request.url)
            if case .stream(let stream) = self.request.destination { stream.finish(error, owner: ObjectIdentifier(self)) }
            self.transport.queue.async {
                self.completeObserver(with: .failure(error))
            }
        }

        func pause() {}
        func resume() {}

        /// On the stub's queue: the reply, unless the transfer was cancelled meanwhile.
        private func deliver(_ reply: Reply) {
            if case .stream(let stream) = self.request.destination, case .response(let response) = reply {
                guard self.phase.withLock({ $0 == .running }) else { return }
                self.stream(response, into: stream)
                return
            }
            let delivers = self.phase.withLock { phase -> Bool in
                guard phase == .running else { return false }
                phase = .finished
                return true
            }
            guard delivers else { return }
            switch reply {
            case .failure(let error, _):
                var failure = error
                failure.failingURL = failure.failingURL ?? self.request.url
                if case .stream(let stream) = self.request.destination { stream.finish(failure, owner: ObjectIdentifier(self)) }
                self.completeObserver(with: .failure(failure))
            case .response(let response):
                self.completeObserver(with: self.complete(response))
            }
        }

        /// On the stub's queue: hands `response` to a streamed body's consumer, in chunks of 16 KiB
        /// as the consumer takes them, then completes.
        private func stream(_ response: Response, into stream: ResponseBodyStream) {
            let completion = self.complete(response)
            guard case .success(let transferResponse) = completion else {
                self.finishStream(stream, with: completion)
                return
            }
            let producer = ResponseBodyStream.Producer(
                resume: { [weak self] in
                    guard let self else { return }
                    self.transport.queue.async { self.pump(stream) }
                },
                cancel: { [weak self] in self?.cancel() },
                owner: ObjectIdentifier(self))
            guard stream.claim(producer) else {
                self.finishStream(stream, with: .failure(TransferError(.invalidRequest, "A response body stream serves one transfer.")))
                return
            }
            stream.receiveHead(transferResponse.head, url: transferResponse.url)
            let body = self.request.head.method == .head ? Data() : response.body
            self.pending.set((body, 0, completion))
            self.pump(stream)
        }

        /// On the stub's queue: offers what is left until the consumer is behind or all is taken.
        private func pump(_ stream: ResponseBodyStream) {
            guard self.phase.withLock({ $0 == .running }), var left = self.pending.value else { return }
            while left.offset < left.body.count {
                let end = min(left.offset + 16_384, left.body.count)
                let taken = left.body[left.offset..<end].withUnsafeBytes { stream.offer($0) }
                guard taken else {
                    self.pending.set(left)  // the consumer resumes the pump when it has drained
                    return
                }
                left.offset = end
            }
            self.pending.set(nil)
            self.finishStream(stream, with: left.completion)
        }

        private func finishStream(_ stream: ResponseBodyStream, with completion: Result<TransferResponse, TransferError>) {
            let finishes = self.phase.withLock { phase -> Bool in
                guard phase == .running else { return false }
                phase = .finished
                return true
            }
            guard finishes else { return }
            switch completion {
            case .success: stream.finish(nil, owner: ObjectIdentifier(self))
            case .failure(let error): stream.finish(error, owner: ObjectIdentifier(self))
            }
            self.completeObserver(with: completion)
        }

        private func complete(_ response: Response) -> Result<TransferResponse, TransferError> {
            guard let url = self.request.url else {
                return .failure(TransferError(.badURL, "The request has no URL."))
            }
            let body = self.request.head.method == .head ? Data() : response.body
            var progress = TransferProgress(bytesReceived: Int64(body.count), expectedBytesToReceive: Int64(body.count))
            if let sent = self.request.body, case .data(let data) = sent {
                progress.bytesSent = Int64(data.count)
                progress.expectedBytesToSend = Int64(data.count)
            }
            self.observer.withLock { $0 }?.transferDidUpdate(progress)
            guard (100...999).contains(response.status) else {
                return .failure(TransferError(.badServerResponse, "The stub's status \(response.status) is not an HTTP status.",
                                              failingURL: url))
            }
            let head = HTTPResponse(status: HTTPResponse.Status(code: response.status), headerFields: response.headerFields)
            switch self.request.destination {
            case .memory:
                return .success(TransferResponse(head: head, body: body, fileURL: nil, url: url, metrics: TransferMetrics()))
            case .file(let file):
                guard self.request.options.fileReplacementStatusCodes.contains(response.status) else {
                    // As the engine: the destination is left as it was, the error body's start kept.
                    let retained = body.prefix(ResponseDestination.retainedErrorBodySize)
                    return .success(TransferResponse(head: head, body: retained, fileURL: nil, url: url, metrics: TransferMetrics()))
                }
                do {
                    try body.write(to: file, options: .atomic)
                } catch {
                    return .failure(TransferError(.cannotWriteToFile, "Cannot write \(file.path): \(error)", failingURL: url))
                }
                return .success(TransferResponse(head: head, body: nil, fileURL: file, url: url, metrics: TransferMetrics()))
            case .stream:
                return .success(TransferResponse(head: head, body: nil, fileURL: nil, url: url, metrics: TransferMetrics()))
            }
        }

        private static func interval(_ duration: Duration) -> DispatchTimeInterval {
            let (seconds, attoseconds) = duration.components
            return .nanoseconds(Int(max(0, min(seconds * 1_000_000_000 + attoseconds / 1_000_000_000, Int64(Int32.max) * 1_000_000))))
        }
    }
}
