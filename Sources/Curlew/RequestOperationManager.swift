import CurlewOperations
import CurlewSerialization
import CurlewTransport
import Dispatch
import Foundation
import HTTPTypes
import Logging
import Metrics
import Tracing

/// The way an application calls Curlew: AFNetworking's `AFHTTPRequestOperationManager`, plus
/// async/await.
///
/// A manager is made once per API. It resolves paths against its ``baseURL``, builds requests with
/// its ``requestSerializer``, sends them as `RequestOperation`s on its ``operationQueue`` through
/// one engine, and turns responses into values with its ``responseSerializer`` (JSON, 2xx only, by
/// default, as in AFNetworking). The backend is chosen here, once; nothing else depends on it.
///
/// ```swift
/// let api = RequestOperationManager(baseURL: URL(string: "https://api.example.com/v1/")!)
///
/// // AFNetworking style: an enqueued RequestOperation, handlers on the completion queue.
/// api.GET("users", parameters: ["page": 2], success: { operation, object in
///     print((object as? JSONValue)?[0]?["name"] ?? "none")
/// }, failure: { operation, error in
///     print("failed:", error)
/// })
///
/// // async/await: typed values; cancelling the task cancels the transfer.
/// let user = try await api.get("users/1", as: User.self)
/// let created = try await api.post("users", parameters: NewUser(name: "Ada"), as: User.self)
/// ```
///
/// Everything the manager sets on a request — the ``securityPolicy``, the ``credentials``, the
/// cookie jar, wire tracing — goes through the transport's options, so a `StubTransport`
/// (module `CurlewTesting`) in unit tests sees exactly the requests the engine would send.
///
/// **Secrets stay on the base URL's origin** (scheme, host and port, the default port and the
/// host's case normalised): the ``credentials``, the cookie jar, `Authorization`,
/// `Proxy-Authorization` and `Cookie`, and the headers the request serializer marks secret
/// (`setValue(_:forSecretHeader:)`) go only to requests on that origin, and on none of their
/// redirects to another one. A path that resolves elsewhere (`https://cdn.example/a.png`,
/// `//other.example/x`, another port or scheme) is still sent, without them, so links to other
/// servers keep working; a `.debug` log line says what was withheld. Without a base URL, each
/// request's own origin is where its secrets go.
///
/// **Errors** a caller catches: `RequestSerializationError` (nothing was sent: bad parameters or
/// headers), `TransferError` (the transfer failed, or was cancelled: code
/// `TransferError/Code/cancelled`; a path that makes no URL is `TransferError/Code/badURL`),
/// `ResponseSerializationError` (the response arrived but was refused: status, content type, an
/// empty or undecodable body — with the response head and body attached).
///
/// **Shutting down.** ``shutdown()`` cancels every operation of the manager (each finishes once,
/// with a cancellation error), waits for them, and shuts down the engine the manager made. A
/// manager released while operations run cancels them the same way. A manager given an engine
/// never shuts that engine down.
///
/// A manager is `Sendable`: its settings live behind one lock, everything else is immutable.
public final class RequestOperationManager: Sendable {
    /// Where relative paths are resolved, with a trailing `/` added to a non-empty path that lacks
    /// one (AFNetworking's rule, so that `v1` + `users` is `v1/users`, not `users`); `nil` when
    /// every path is an absolute URL.
    public let baseURL: URL?
    /// The engine, when the manager runs on one (always, except with a stand-in ``transport``).
    public let engine: TransferEngine?
    /// What runs the manager's transfers: its ``engine``, or the stand-in it was given.
    public let transport: any TransferRunning
    /// The queue every operation of the manager runs on. Set its `maxConcurrentOperationCount` to
    /// limit how many run at once; add dependencies between operations before they are enqueued
    /// (build them with ``operation(with:success:failure:)``).
    public let operationQueue: OperationQueue
    /// The cookie jar shared by the manager's transfers, when cookies are on (see ``CookieStorage``).
    public let cookieJar: CookieJar?
    /// The HTTP cache answering the manager's GETs, when it was made with one (see ``HTTPCache``).
    public let cache: HTTPCache?

    /// What the manager's transfers run on: the transport, behind the cache when there is one.
    let runner: any TransferRunning
    /// ``runner`` when it is an engine.
    let runnerEngine: TransferEngine?
    /// The monitors the manager was given.
    private let monitors: [any EventMonitor]
    /// The metrics monitor, when a metrics backend records.
    private let metrics: RequestMetrics?
    /// The tracer, unless it is the no-op one.
    private let tracer: (any Tracer)?
    /// The engine's pool meters, sampled while a metrics backend records.
    private let poolGauges: PoolGauges?
    /// The async requests in flight, which ``shutdown()`` cancels.
    let runs = RunRegistry()
    /// Whether ``shutdown()`` shuts ``engine`` down.
    private let ownsEngine: Bool
    /// Where the manager's secrets go: the base URL's origin.
    let secretScope: SecretScope
    let settings: Locked<Settings>

    /// The manager's mutable settings.
    struct Settings: Sendable {
        var requestSerializer: any RequestSerializer = HTTPRequestSerializer() {
            didSet { self.refresh() }
        }
        var responseSerializer: any ResponseSerializer = JSONResponseSerializer() {
            didSet { self.refresh() }
        }
        var decoder: any DataDecoder = JSONDecoder() {
            didSet { self.refresh() }
        }
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var securityPolicy = SecurityPolicy() {
            didSet { self.refresh() }
        }
        var credentials: TransferCredentials? {
            didSet { self.refresh() }
        }
        var transferOptions = TransferOptions()
        var retryPolicy = RetryPolicy.none {
            didSet { self.refresh() }
        }
        var retryBudget: RetryBudget? = RetryBudget() {
            didSet { self.refresh() }
        }
        var interceptor: (any RequestInterceptor)? {
            didSet { self.refresh() }
        }
        var isShutDown = false
        var logger = RequestOperationManager.disabledLogger {
            didSet { self.refresh() }
        }
        /// Curl's wire trace to ``logger``, while it is at `.trace`.
        var wireTracer: WireTracer? {
            didSet { self.refresh() }
        }
        /// What observes the requests; `nil` when nothing does.
        var observers: Observers? {
            didSet { self.refresh() }
        }

        /// What a request needs of the settings above, made again whenever one of them is set, so
        /// that a request reads it with one lock and one retain.
        private(set) var snapshot = Snapshot(Settings.Values(logger: RequestOperationManager.disabledLogger))

        /// The settings a request reads, as one immutable object.
        final class Snapshot: Sendable {
            let validation: ResponseValidation
            let decoder: any DataDecoder
            let tls: TLSOptions
            let credentials: TransferCredentials?
            let retryPolicy: RetryPolicy
            let retryBudget: RetryBudget?
            let interceptor: (any RequestInterceptor)?
            /// The header names the request serializer marks secret.
            let secretHeaderNames: Set<HTTPField.Name>
            let logger: Logger
            let wireTracer: WireTracer?
            let observers: Observers?

            fileprivate init(_ values: Values) {
                self.validation = ResponseValidation(values.responseSerializer)
                self.decoder = values.decoder
                self.tls = values.securityPolicy.tlsOptions
                self.credentials = values.credentials
                self.retryPolicy = values.retryPolicy
                self.retryBudget = values.retryBudget
                self.interceptor = values.interceptor
                self.secretHeaderNames = values.requestSerializer.secretHeaderNames
                self.logger = values.logger
                self.wireTracer = values.wireTracer
                self.observers = values.observers
            }
        }

        /// The settings a ``Snapshot`` is made of.
        fileprivate struct Values {
            var requestSerializer: any RequestSerializer = HTTPRequestSerializer()
            var responseSerializer: any ResponseSerializer = JSONResponseSerializer()
            var decoder: any DataDecoder = JSONDecoder()
            var securityPolicy = SecurityPolicy()
            var credentials: TransferCredentials?
            var retryPolicy = RetryPolicy.none
            var retryBudget: RetryBudget? = RetryBudget()
            var interceptor: (any RequestInterceptor)?
            var logger: Logger
            var wireTracer: WireTracer?
            var observers: Observers?
        }

        private mutating func refresh() {
            self.snapshot = Snapshot(Values(
                requestSerializer: self.requestSerializer, responseSerializer: self.responseSerializer, decoder: self.decoder, securityPolicy: self.securityPolicy,
                credentials: self.credentials, retryPolicy: self.retryPolicy, retryBudget: self.retryBudget,
                interceptor: self.interceptor, logger: self.logger, wireTracer: self.wireTracer, observers: self.observers))
        }

        init() {
            self.refresh()
        }
    }

    /// The settings a request reads, taken once.
    var snapshot: Settings.Snapshot {
        self.settings.withLock { $0.snapshot }
    }

    // MARK: Creating a manager

    /// Creates a manager with an engine of its own on `backend`.
    ///
    /// - Parameters:
    ///   - baseURL: Where relative paths are resolved; `nil` when every path is an absolute URL.
    ///   - backend: The scheduler the engine runs on; `.dispatch` by default.
    ///   - configuration: The engine's connection limits.
    ///   - cookies: `.inMemory` (the default: a jar of the manager's own), `.off`, or a shared jar.
    ///   - cache: An HTTP cache for the manager's GETs (``HTTPCache``); none by default.
    ///   - logger: Where requests are logged: start, finish and failure at `.debug`, curl's wire
    ///     trace (credentials redacted) at `.trace`. By default nothing is logged.
    ///   - metricsFactory: Where request metrics go; the bootstrapped `MetricsSystem.factory` by
    ///     default (a no-op until the application bootstraps one). See ``RequestMetricsLabels``.
    ///   - monitors: Hear every request's events (see ``EventMonitor``); none by default.
    ///   - tracer: Makes a client span per request and propagates its context in the request's
    ///     headers; the bootstrapped `InstrumentationSystem.tracer` by default, read now (a no-op
    ///     until the application bootstraps one, and then the manager traces nothing).
    public convenience init(
        baseURL: URL? = nil,
        backend: Backend = .dispatch,
        configuration: TransferEngine.Configuration = TransferEngine.Configuration(),
        cookies: CookieStorage = .inMemory,
        cache: HTTPCache? = nil,
        logger: Logger = RequestOperationManager.disabledLogger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        monitors: [any EventMonitor] = [],
        tracer: any Tracer = InstrumentationSystem.tracer
    ) {
        let engine = TransferEngine(scheduler: backend.makeScheduler(), configuration: configuration)
        self.init(baseURL: baseURL, transport: engine, engine: engine, ownsEngine: true, cookies: cookies, cache: cache,
                  logger: logger, metricsFactory: metricsFactory, monitors: monitors, tracer: tracer)
    }

    /// Creates a manager on an engine you made (and keep: the manager never shuts it down).
    ///
    /// - Parameters:
    ///   - baseURL: Where relative paths are resolved.
    ///   - engine: Any `TransferEngine`, on any scheduler.
    ///   - cookies: `.inMemory` (the default), `.off` or a shared jar.
    ///   - cache: An HTTP cache for the manager's GETs; none by default.
    ///   - logger: Where requests are logged; nothing by default.
    ///   - metricsFactory: Where request metrics go.
    ///   - monitors: Hear every request's events; none by default.
    ///   - tracer: Traces the requests; the bootstrapped tracer by default.
    public convenience init(
        baseURL: URL? = nil,
        engine: TransferEngine,
        cookies: CookieStorage = .inMemory,
        cache: HTTPCache? = nil,
        logger: Logger = RequestOperationManager.disabledLogger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        monitors: [any EventMonitor] = [],
        tracer: any Tracer = InstrumentationSystem.tracer
    ) {
        self.init(baseURL: baseURL, transport: engine, engine: engine, ownsEngine: false, cookies: cookies, cache: cache,
                  logger: logger, metricsFactory: metricsFactory, monitors: monitors, tracer: tracer)
    }

    /// Creates a manager on any `TransferRunning` — typically a `StubTransport` (module
    /// `CurlewTesting`) in unit tests.
    ///
    /// ```swift
    /// let stub = StubTransport()
    /// stub.respond(to: "/v1/users/1", with: .json(#"{"id":1,"name":"Ada"}"#))
    /// let api = RequestOperationManager(baseURL: URL(string: "https://api.example.com/v1/")!, transport: stub)
    /// ```
    ///
    /// - Parameters:
    ///   - baseURL: Where relative paths are resolved.
    ///   - transport: Runs the transfers; a `TransferEngine` is used as an engine.
    ///   - cookies: `.inMemory` (the default), `.off` or a shared jar (only an engine uses it).
    ///   - cache: An HTTP cache for the manager's GETs, in front of `transport`; none by default.
    ///   - logger: Where requests are logged; nothing by default.
    ///   - metricsFactory: Where request metrics go.
    ///   - monitors: Hear every request's events; none by default.
    ///   - tracer: Traces the requests; the bootstrapped tracer by default.
    public convenience init(
        baseURL: URL? = nil,
        transport: any TransferRunning,
        cookies: CookieStorage = .inMemory,
        cache: HTTPCache? = nil,
        logger: Logger = RequestOperationManager.disabledLogger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        monitors: [any EventMonitor] = [],
        tracer: any Tracer = InstrumentationSystem.tracer
    ) {
        self.init(baseURL: baseURL, transport: transport, engine: transport as? TransferEngine, ownsEngine: false,
                  cookies: cookies, cache: cache, logger: logger, metricsFactory: metricsFactory, monitors: monitors,
                  tracer: tracer)
    }

    private init(
        baseURL: URL?, transport: any TransferRunning, engine: TransferEngine?, ownsEngine: Bool,
        cookies: CookieStorage, cache: HTTPCache?, logger: Logger, metricsFactory: any MetricsFactory,
        monitors: [any EventMonitor], tracer: any Tracer
    ) {
        self.baseURL = baseURL.map(Self.withTrailingSlash)
        self.secretScope = SecretScope(baseURL: baseURL)
        self.transport = transport
        self.engine = engine
        self.ownsEngine = ownsEngine
        self.cookieJar = cookies.makeJar()
        self.cache = cache
        // The cache sits inside the observation: a request it answers is still counted, logged and traced.
        let runner: any TransferRunning = cache.map { CachingTransport(base: transport, cache: $0) } ?? transport
        self.runner = runner
        self.runnerEngine = runner as? TransferEngine
        self.monitors = monitors
        let records = RequestMetrics.records(metricsFactory)
        self.metrics = records ? RequestMetrics(factory: metricsFactory) : nil
        self.poolGauges = records ? engine.map { PoolGauges(engine: $0, factory: metricsFactory) } : nil
        self.tracer = Observers.recording(tracer)
        var settings = Settings()
        settings.logger = logger
        settings.wireTracer = LoggingMonitor.wireTracer(for: logger)
        settings.observers = Observers.make(monitors: monitors, logger: logger, metrics: self.metrics, tracer: self.tracer)
        self.settings = Locked(settings)
        let queue = OperationQueue()
        queue.name = "curlew.manager"
        self.operationQueue = queue
    }

    /// Cancels what is still running, as ``shutdown()`` does, without waiting; an engine the
    /// manager made shuts down once its last operation has let go of it.
    deinit {
        self.operationQueue.cancelAllOperations()
    }

    /// A logger that discards everything, at no cost: the default.
    public static let disabledLogger = Logger(label: "curlew", factory: { _ in SwiftLogNoOpLogHandler() })

    // MARK: Settings

    /// Builds every request: where parameters go and how they are encoded, default headers
    /// (credentials with `setBearerToken(_:)` or `setAuthorization(username:password:)`), a
    /// timeout. `HTTPRequestSerializer()` by default (query string, or a form body); set a
    /// `JSONRequestSerializer()` for JSON bodies.
    public var requestSerializer: any RequestSerializer {
        get { self.settings.withLock { $0.requestSerializer } }
        set { self.settings.withLock { $0.requestSerializer = newValue } }
    }

    /// Turns the responses of the AFNetworking-style methods into their `responseObject`:
    /// `JSONResponseSerializer()` by default (a `JSONValue`; 200–299 with a JSON content type,
    /// anything else fails with `ResponseSerializationError`). Its acceptable status codes and
    /// content types also apply to the typed async methods.
    public var responseSerializer: any ResponseSerializer {
        get { self.settings.withLock { $0.responseSerializer } }
        set { self.settings.withLock { $0.responseSerializer = newValue } }
    }

    /// Decodes the bodies of the typed async methods (`get(_:parameters:as:)` and
    /// the others); a `JSONDecoder` by default.
    public var decoder: any DataDecoder {
        get { self.settings.withLock { $0.decoder } }
        set { self.settings.withLock { $0.decoder = newValue } }
    }

    /// Where success and failure handlers run; `nil` (the default) is the operations' default, a
    /// queue of the library's (never the main queue unless `RequestOperation/defaultCallbackQueues`
    /// says so).
    public var completionQueue: DispatchQueue? {
        get { self.settings.withLock { $0.completionQueue } }
        set { self.settings.withLock { $0.completionQueue = newValue } }
    }

    /// A group every operation enters until its handler has run; `nil` by default.
    public var completionGroup: DispatchGroup? {
        get { self.settings.withLock { $0.completionGroup } }
        set { self.settings.withLock { $0.completionGroup = newValue } }
    }

    /// How servers are trusted: full verification by default; pins and a client certificate on
    /// demand.
    public var securityPolicy: SecurityPolicy {
        get { self.settings.withLock { $0.securityPolicy } }
        set { self.settings.withLock { $0.securityPolicy = newValue } }
    }

    /// The user name and password curl answers authentication challenges with (Basic, Digest),
    /// only ever sent to the base URL's origin, as every secret of the manager (see
    /// ``RequestOperationManager``). `nil` by default. (A bearer token is a header:
    /// `requestSerializer.setBearerToken(_:)`.)
    public var credentials: TransferCredentials? {
        get { self.settings.withLock { $0.credentials } }
        set { self.settings.withLock { $0.credentials = newValue } }
    }

    /// The transfer options every request the manager builds starts from: timeouts, redirects,
    /// HTTP version, proxy, size and rate limits. The manager's ``securityPolicy``,
    /// ``credentials``, cookie jar and tracing replace the matching options.
    public var transferOptions: TransferOptions {
        get { self.settings.withLock { $0.transferOptions } }
        set { self.settings.withLock { $0.transferOptions = newValue } }
    }

    /// When the manager's requests are sent again after a failed attempt: `RetryPolicy/none` by
    /// default. Every operation the manager makes — the AFNetworking-style methods, the async ones,
    /// ``operation(with:success:failure:)`` — starts with it; each attempt is a new transfer (a
    /// streamed body is read again from its start), and cancelling (a task, an operation,
    /// ``shutdown()``) during a wait between attempts finishes the request at once.
    ///
    /// ```swift
    /// api.retryPolicy = .default          // 3 attempts: idempotent methods, 408/429/502/503/504, timeouts, resets
    /// let user = try await api.get("users/1", as: User.self)
    /// ```
    ///
    /// Metrics and logs count each attempt as a request. Change one operation's policy with
    /// ``operation(with:success:failure:)`` before enqueuing it.
    public var retryPolicy: RetryPolicy {
        get { self.settings.withLock { $0.retryPolicy } }
        set { self.settings.withLock { $0.retryPolicy = newValue } }
    }

    /// The budget the retries of the manager's operations share (see `RetryBudget`), so that
    /// ``retryPolicy`` cannot multiply the load on a server that fails every request: a budget of
    /// the manager's own by default (retries up to 20 % of the first attempts of the last 10
    /// seconds, plus 10). Give several managers of one service the same budget, or set `nil` to let
    /// every request retry as its policy says. Operations made afterwards use the new value.
    ///
    /// ```swift
    /// api.retryPolicy = .default
    /// api.retryBudget = RetryBudget(retryRatio: 0.1)   // at most ~1.1× the load while the server fails
    /// ```
    public var retryBudget: RetryBudget? {
        get { self.settings.withLock { $0.retryBudget } }
        set { self.settings.withLock { $0.retryBudget = newValue } }
    }

    /// Adapts each request before every attempt and may ask for a retry after one (a fresh bearer
    /// token, a refresh on 401: see `RequestInterceptor`); consulted before ``retryPolicy``. `nil` by
    /// default. It runs on Swift's cooperative pool, never on the network context.
    public var interceptor: (any RequestInterceptor)? {
        get { self.settings.withLock { $0.interceptor } }
        set { self.settings.withLock { $0.interceptor = newValue } }
    }

    /// Where requests are logged: start, finish and failure at `.debug`; at `.trace`, curl's wire
    /// trace too (headers with credentials redacted, body sizes only). Its level is read when it is
    /// set: above `.debug` nothing is logged at all, and below `.trace` curl is not asked to trace.
    public var logger: Logger {
        get { self.settings.withLock { $0.logger } }
        set {
            let observers = Observers.make(monitors: self.monitors, logger: newValue, metrics: self.metrics, tracer: self.tracer)
            self.settings.withLock {
                $0.logger = newValue
                $0.wireTracer = LoggingMonitor.wireTracer(for: newValue)
                $0.observers = observers
            }
        }
    }

    // MARK: URLs and requests

    /// The absolute URL for `path`: `URL(string: path, relativeTo: baseURL)`.
    ///
    /// | `path` (base `http://example.com/v1/`) | URL |
    /// | --- | --- |
    /// | `foo` | `http://example.com/v1/foo` |
    /// | `foo?bar=baz` | `http://example.com/v1/foo?bar=baz` |
    /// | `/foo` | `http://example.com/foo` |
    /// | `foo/` | `http://example.com/v1/foo/` |
    /// | `/foo/` | `http://example.com/foo/` |
    /// | `http://example2.com/` | `http://example2.com/` (another origin: sent without secrets) |
    /// | `//example2.com/x` | `http://example2.com/x` (another origin: sent without secrets) |
    /// | `https://example.com/x` | `https://example.com/x` (another origin: sent without secrets) |
    /// | `HTTP://EXAMPLE.com:80/x` | `HTTP://EXAMPLE.com:80/x` (the same origin) |
    /// | empty | the base URL itself |
    ///
    /// A URL on another origin than the base URL's is sent without the manager's secrets (see
    /// ``RequestOperationManager``).
    ///
    /// - Parameter path: A path relative to ``baseURL``, or an absolute URL.
    /// - Returns: The absolute URL.
    /// - Throws: `TransferError` with `TransferError/Code/badURL` when `path` makes no absolute
    ///   URL (no base URL and a relative path, or text no URL can hold).
    public func url(for path: String) throws(TransferError) -> URL {
        let resolved: URL?
        if path.isEmpty {
            resolved = self.baseURL
        } else {
            resolved = URL(string: path, relativeTo: self.baseURL)?.absoluteURL
        }
        guard let resolved, resolved.scheme != nil, resolved.host != nil else {
            throw TransferError(.badURL, "\"\(path)\" is not a URL relative to \(self.baseURL?.absoluteString ?? "no base URL").")
        }
        return resolved
    }

    /// A request for `method` and `path`, built by the ``requestSerializer`` from the manager's
    /// ``transferOptions``, with the manager's security, credentials, cookies and tracing — the
    /// secrets only on the base URL's origin: what the AFNetworking-style and async methods send.
    ///
    /// Change it and pass it to ``operation(with:success:failure:)`` or ``value(for:as:)`` for
    /// what the shortcuts do not cover (a per-request rate limit, a response body to a file):
    ///
    /// ```swift
    /// var request = try api.request(.get, "exports/latest")
    /// request.options.maximumDownloadBytesPerSecond = 1 << 20
    /// let data = try await api.value(for: request, as: Data.self)
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method; it decides where parameters go.
    ///   - path: Resolved by ``url(for:)``.
    ///   - parameters: Any `Encodable & Sendable`, or `nil`.
    /// - Returns: The request.
    /// - Throws: `TransferError/Code/badURL` as ``url(for:)``; `RequestSerializationError` from
    ///   the serializer.
    public func request(
        _ method: HTTPRequest.Method, _ path: String, parameters: (any Encodable & Sendable)?
    ) throws -> TransferRequest {
        let url = try self.url(for: path)
        let (serializer, options) = self.settings.withLock { ($0.requestSerializer, $0.transferOptions) }
        let plain = TransferRequest(url: url, method: method, options: options)
        return self.prepared(try serializer.serialize(plain, parameters: parameters))
    }

    /// A request with literal parameters: `try api.request(.get, "search", parameters: ["q": "swift"])`.
    ///
    /// - Throws: As ``request(_:_:parameters:)-8769d``.
    public func request(_ method: HTTPRequest.Method, _ path: String, parameters: Parameters? = nil) throws -> TransferRequest {
        try self.request(method, path, parameters: parameters.map { $0 as any Encodable & Sendable })
    }

    /// `request` with the manager's security policy, credentials, cookie jar, the request
    /// serializer's secret header names and (at `.trace`) wire tracing: what the manager applies to
    /// every request it sends, including ones you built.
    ///
    /// A request to another origin than the base URL's is returned without the credentials, the
    /// cookie jar and its secret header fields (`Authorization`, `Proxy-Authorization`, `Cookie` and
    /// those named secret), whoever set them, and a `.debug` line is logged: secrets never leave the
    /// base URL's origin.
    ///
    /// - Parameter request: Any request.
    /// - Returns: The request as the manager sends it.
    public func prepared(_ request: TransferRequest) -> TransferRequest {
        self.prepared(request, with: self.snapshot)
    }

    /// `request` as ``prepared(_:)`` makes it, with settings already read.
    func prepared(_ request: TransferRequest, with snapshot: Settings.Snapshot) -> TransferRequest {
        var request = request
        request.options.tls = snapshot.tls
        request.options.credentials = snapshot.credentials
        request.options.cookieJar = self.cookieJar
        if !snapshot.secretHeaderNames.isEmpty { request.options.secretHeaderNames.formUnion(snapshot.secretHeaderNames) }
        request.options.wireTracer = snapshot.wireTracer
        let (bound, withheld) = self.secretScope.binding(request)
        if !withheld.isEmpty, snapshot.logger.logLevel <= .debug {
            let origin = Origin(request.head).map(String.init(describing:)) ?? "an invalid origin"
            let base = self.secretScope.baseOrigin.map(String.init(describing:)) ?? "none"
            let target = request.url?.absoluteString ?? origin
            snapshot.logger.debug("""
                \(request.head.method) \(target) is sent without \(withheld.joined(separator: ", ")): \
                \(origin) is not the base URL's origin \(base)
                """)
        }
        return bound
    }

    // MARK: Operations

    /// An operation for `request` (prepared as ``prepared(_:)`` says) with the manager's response
    /// serializer, completion queue and group, retry policy and interceptor, **not enqueued**: AFNetworking's
    /// `HTTPRequestOperationWithRequest:success:failure:`. Add dependencies, then put it on
    /// ``operationQueue`` (or start it by hand).
    ///
    /// - Parameters:
    ///   - request: What to send.
    ///   - success: Receives the operation and its response object, on the completion queue.
    ///   - failure: Receives the operation and why it failed (cancellation included).
    /// - Returns: The operation.
    public func operation(
        with request: TransferRequest,
        success: SuccessHandler?,
        failure: FailureHandler?
    ) -> RequestOperation {
        self.makeOperation(self.prepared(request), serializer: nil, success: success, failure: failure)
    }

    /// An operation for a request already prepared, with `serializer` or the manager's.
    func makeOperation(
        _ request: TransferRequest,
        serializer: (any ResponseSerializer)?,
        success: SuccessHandler?,
        failure: FailureHandler?
    ) -> RequestOperation {
        let settings = self.settings.value
        let observation = settings.observers?.begin(request, dialect: .operation, over: self.runner, engine: self.runnerEngine)
        let operation = RequestOperation(request: request, transport: observation ?? self.runner)
        operation.responseSerializer = serializer ?? settings.responseSerializer
        operation.retryPolicy = settings.retryPolicy
        operation.retryBudget = settings.retryBudget
        operation.interceptor = settings.interceptor
        if let queue = settings.completionQueue { operation.completionQueue = queue }
        if let group = settings.completionGroup { operation.completionGroup = group }
        var operationSuccess = success
        var operationFailure: (@Sendable (RequestOperation, any Error) -> Void)?
        if let failure {
            operationFailure = { operation, error in failure(operation, error) }
        }
        if let observation {
            // The operation's end, as its handlers hear it: the value was delivered, or it failed.
            operationSuccess = { operation, object in
                observation.finish(operation.response.map { .success($0) }
                                   ?? .failure(TransferError(.unknown, "The operation succeeded without a response.")))
                success?(operation, object)
            }
            operationFailure = { [failure = operationFailure] operation, error in
                observation.finish(.failure(error))
                failure?(operation, error)
            }
        }
        operation.setCompletionHandlers(success: operationSuccess, failure: operationFailure)
        if settings.isShutDown { operation.cancel() }
        return operation
    }

    /// Runs `failure` with `error` as an operation's handler would run, for a request that could
    /// not be made (AFNetworking calls `failure(nil, error)` asynchronously then).
    func reportUnsentFailure(_ error: any Error, to failure: FailureHandler?) {
        guard let failure else { return }
        let (queue, group) = self.settings.withLock { ($0.completionQueue, $0.completionGroup) }
        let target = queue ?? RequestOperation.defaultCallbackQueues.completion
        group?.enter()
        target.async {
            failure(nil, error)
            group?.leave()
        }
    }

    // MARK: Shutting down

    /// Cancels every operation of the manager and waits until each has finished (once, with a
    /// cancellation error, for those that had not finished), then shuts down the engine the
    /// manager made. Operations made afterwards finish at once with a cancellation error.
    public func shutdown() async {
        self.settings.withLock { $0.isShutDown = true }
        self.poolGauges?.stop()
        self.operationQueue.cancelAllOperations()
        self.operationQueue.isSuspended = false  // a suspended queue would never reach the barrier
        await self.runs.shutDown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            self.operationQueue.addBarrierBlock { continuation.resume() }
        }
        if self.ownsEngine, let engine = self.engine {
            await engine.shutdown()
        }
    }

    /// A path with the trailing slash AFNetworking adds to a base URL.
    private static func withTrailingSlash(_ url: URL) -> URL {
        let absolute = url.absoluteURL
        guard !absolute.path.isEmpty, !absolute.absoluteString.hasSuffix("/"),
              var components = URLComponents(url: absolute, resolvingAgainstBaseURL: false) else {
            return absolute
        }
        components.percentEncodedPath += "/"
        return components.url ?? absolute
    }
}

/// Where a ``RequestOperationManager`` keeps cookies.
///
/// A manager keeps cookies by default, as a URLSession or a `requests` session does: a jar of its own,
/// in memory, whose cookies go only to the hosts that set them (curl's rules: domain, path, `Secure`,
/// expiry) and, like every secret of the manager, only to its base URL's origin. A bare
/// `TransferEngine` keeps none unless a request names a jar.
public enum CookieStorage: Sendable, Hashable {
    /// No cookies: `Set-Cookie` is ignored and no cookie is sent. A `Cookie` header set by hand is
    /// still sent.
    case off
    /// A jar of the manager's own, in memory, shared by all its transfers (the default).
    case inMemory
    /// `jar`, which may be shared with other managers or transfers.
    case jar(CookieJar)

    func makeJar() -> CookieJar? {
        switch self {
        case .off: return nil
        case .inMemory: return CookieJar()
        case .jar(let jar): return jar
        }
    }
}
