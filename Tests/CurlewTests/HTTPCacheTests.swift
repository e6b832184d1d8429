import Curlew
import CurlewTesting
import CurlewTestServer
import CurlewTestSupport
import Foundation
import HTTPTypes
import Testing

/// The HTTP cache against the test server on every backend, counted on the server's side
/// (``TestServer/requests(forKey:)``): a fresh hit sends nothing; a stale entry sends a conditional
/// request, the server answers 304, and the caller sees the stored 200 with its body (the body names
/// the request that made it, `X-Request-Number` the one that revalidated it).
@Suite("HTTP cache")
struct HTTPCacheTests {
    static let requestNumber = HTTPField.Name("x-request-number")

    /// A fresh key for the `.cached` route.
    static func key() -> String {
        "cache-" + UUID().uuidString
    }

    static func request(_ route: Route, fields: HTTPFields = [:], method: HTTPRequest.Method = .get) throws -> TransferRequest {
        TransferRequest(url: try testServer().url(route), method: method, headerFields: fields)
    }

    /// Runs `body` with a `CachingTransport` over a new engine of `backend`.
    static func withCachingTransport(
        _ backend: BackendConfiguration, cache: HTTPCache = HTTPCache(), _ body: (CachingTransport) async throws -> Void
    ) async throws {
        try await withEngine(on: backend.makeScheduler()) { engine in
            try await body(CachingTransport(base: engine, cache: cache))
        }
    }

    @Test("a fresh stored response answers without a request", arguments: BackendConfiguration.allCases)
    func freshHit(_ backend: BackendConfiguration) async throws {
        let key = Self.key()
        let route = Route.cached(key: key, cacheControl: "max-age=600")
        try await Self.withCachingTransport(backend) { transport in
            let first = try await transport.fetch(try Self.request(route))
            #expect(first.response.body == Data("cached \(key) #1\n".utf8))
            #expect(first.response.metrics.cacheOutcome == .miss)
            let second = try await transport.fetch(try Self.request(route))
            #expect(second.response.body == Data("cached \(key) #1\n".utf8))
            #expect(second.response.head.status == .ok)
            #expect(second.response.metrics.cacheOutcome == .hit)
            #expect(second.response.head.headerFields[.age] != nil)
            #expect(second.progress.last?.bytesReceived == Int64(second.response.body?.count ?? -1))
            #expect(try testServer().requests(forKey: key) == 1, "a fresh hit asked the server")
            #expect(transport.cache.count == 1)
        }
    }

    @Test("a stale entry is revalidated: 304 on the wire, the stored 200 for the caller", arguments: BackendConfiguration.allCases)
    func revalidation(_ backend: BackendConfiguration) async throws {
        for (etag, lastModified) in [(true, false), (false, true)] {
            let key = Self.key()
            let route = Route.cached(key: key, cacheControl: "no-cache", etag: etag, lastModified: lastModified)
            try await Self.withCachingTransport(backend) { transport in
                _ = try await transport.fetch(try Self.request(route))
                let second = try await transport.fetch(try Self.request(route))
                #expect(try testServer().requests(forKey: key) == 2)
                #expect(second.response.head.status == .ok)
                #expect(second.response.body == Data("cached \(key) #1\n".utf8), "the stored body")
                #expect(second.response.head.headerFields[try #require(Self.requestNumber)] == "2", "fields from the 304")
                #expect(second.response.metrics.cacheOutcome == .revalidated)
            }
        }
    }

    @Test("an entry goes stale as the clock passes its max-age", arguments: BackendConfiguration.allCases)
    func expiry(_ backend: BackendConfiguration) async throws {
        let clock = Locked(Date(timeIntervalSince1970: 1_700_000_000))
        let cache = HTTPCache(now: { clock.value })
        let key = Self.key()
        let route = Route.cached(key: key, cacheControl: "max-age=60")
        try await Self.withCachingTransport(backend, cache: cache) { transport in
            _ = try await transport.fetch(try Self.request(route))
            clock.withLock { $0 += 59 }
            #expect(try await transport.fetch(try Self.request(route)).response.metrics.cacheOutcome == .hit)
            #expect(try testServer().requests(forKey: key) == 1)
            clock.withLock { $0 += 2 }
            let stale = try await transport.fetch(try Self.request(route))
            #expect(stale.response.metrics.cacheOutcome == .revalidated)
            #expect(try testServer().requests(forKey: key) == 2)
            // Revalidated at that time: fresh again for 60 s.
            #expect(try await transport.fetch(try Self.request(route)).response.metrics.cacheOutcome == .hit)
            #expect(try testServer().requests(forKey: key) == 2)
        }
    }

    @Test("Vary: one entry per value of the varying field", arguments: BackendConfiguration.allCases)
    func vary(_ backend: BackendConfiguration) async throws {
        let key = Self.key()
        let route = Route.cached(key: key, cacheControl: "max-age=600", vary: "Accept")
        try await Self.withCachingTransport(backend) { transport in
            let json = try Self.request(route, fields: [.accept: "application/json"])
            let xml = try Self.request(route, fields: [.accept: "application/xml"])
            #expect(try await transport.fetch(json).response.body == Data("cached \(key) #1 application/json\n".utf8))
            #expect(try await transport.fetch(xml).response.body == Data("cached \(key) #2 application/xml\n".utf8))
            let jsonAgain = try await transport.fetch(json)
            #expect(jsonAgain.response.body == Data("cached \(key) #1 application/json\n".utf8))
            #expect(jsonAgain.response.metrics.cacheOutcome == .hit)
            #expect(try await transport.fetch(xml).response.metrics.cacheOutcome == .hit)
            #expect(try testServer().requests(forKey: key) == 2)
        }
    }

    @Test("no-store in the response or the request: every request goes out, nothing is kept",
          arguments: BackendConfiguration.allCases)
    func noStore(_ backend: BackendConfiguration) async throws {
        let key = Self.key()
        try await Self.withCachingTransport(backend) { transport in
            let unstorable = Route.cached(key: key, cacheControl: "no-store, max-age=600")
            _ = try await transport.fetch(try Self.request(unstorable))
            let again = try await transport.fetch(try Self.request(unstorable))
            #expect(again.response.metrics.cacheOutcome == .miss)
            let storable = Route.cached(key: key, cacheControl: "max-age=600")
            let asked = try await transport.fetch(try Self.request(storable, fields: [.cacheControl: "no-store"]))
            #expect(asked.response.metrics.cacheOutcome == nil, "the cache stayed out")
            #expect(try testServer().requests(forKey: key) == 3)
            #expect(transport.cache.count == 0)
        }
    }

    @Test("an unsafe request drops the stored response of its URL", arguments: BackendConfiguration.allCases)
    func invalidation(_ backend: BackendConfiguration) async throws {
        let key = Self.key()
        let route = Route.cached(key: key, cacheControl: "max-age=600")
        try await Self.withCachingTransport(backend) { transport in
            _ = try await transport.fetch(try Self.request(route))
            _ = try await transport.fetch(try Self.request(route, method: .post))
            let after = try await transport.fetch(try Self.request(route))
            #expect(after.response.body == Data("cached \(key) #3\n".utf8))
            #expect(after.response.metrics.cacheOutcome == .miss)
        }
    }

    @Test("a cache in a directory answers from what an earlier cache there stored", arguments: BackendConfiguration.allCases)
    func directory(_ backend: BackendConfiguration) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = Self.key()
        let route = Route.cached(key: key, cacheControl: "max-age=600")
        let first = try HTTPCache(directory: directory)
        try await Self.withCachingTransport(backend, cache: first) { transport in
            _ = try await transport.fetch(try Self.request(route))
        }
        await first.flush()
        try await Self.withCachingTransport(backend, cache: try HTTPCache(directory: directory)) { transport in
            let hit = try await transport.fetch(try Self.request(route))
            #expect(hit.response.metrics.cacheOutcome == .hit)
            #expect(hit.response.body == Data("cached \(key) #1\n".utf8))
        }
        #expect(try testServer().requests(forKey: key) == 1)
    }

    @Test("the manager's cache: a hit needs no request, and a revalidation is a 200, never a 304 error",
          arguments: BackendConfiguration.allCases)
    func manager(_ backend: BackendConfiguration) async throws {
        let engine = TransferEngine(scheduler: backend.makeIsolatedScheduler())
        let api = RequestOperationManager(baseURL: try testServer().baseURL, transport: engine, cache: HTTPCache())
        let fresh = Self.key()
        let revalidated = Self.key()
        do {
            let freshPath = Route.cached(key: fresh, cacheControl: "max-age=600").path
            _ = try await api.data(.get, freshPath)
            let (data, response) = try await api.data(.get, freshPath)
            #expect(data == Data("cached \(fresh) #1\n".utf8) && response.metrics.cacheOutcome == .hit)
            #expect(try testServer().requests(forKey: fresh) == 1)

            let stalePath = Route.cached(key: revalidated, cacheControl: "no-cache").path
            _ = try await api.data(.get, stalePath)
            let (again, second) = try await api.data(.get, stalePath)
            #expect(again == Data("cached \(revalidated) #1\n".utf8))
            #expect(second.head.status == .ok && second.metrics.cacheOutcome == .revalidated)
            #expect(try testServer().requests(forKey: revalidated) == 2)
            #expect(api.cache?.count == 2)
        } catch {
            Issue.record(error)
        }
        await api.shutdown()
        await engine.shutdown()
    }

    // MARK: The seam's contract, without sockets

    @Test("cancelled before it starts, or while the cache looks: one completion, the cancellation")
    func cancellation() async throws {
        let stub = StubTransport()
        stub.respond(to: "/a", with: StubTransport.Response(headerFields: [.cacheControl: "max-age=600"], body: Data("a".utf8)))
        let transport = CachingTransport(base: stub, cache: HTTPCache())
        let url = try #require(URL(string: "https://example.com/a"))
        // Stored first: the next lookups find a fresh entry.
        #expect(try await transport.fetch(TransferRequest(url: url)).response.metrics.cacheOutcome == .miss)

        let unstarted = ResponseProbe()
        let control = transport.makeTransfer(TransferRequest(url: url), observer: unstarted)
        control.cancel()
        control.start()
        #expect(await waitUntil { unstarted.completions.count == 1 })
        #expect(unstarted.completions.first?.failure?.code == .cancelled)

        var probes: [ResponseProbe] = []
        for _ in 0..<50 {
            let probe = ResponseProbe()
            let control = transport.makeTransfer(TransferRequest(url: url), observer: probe)
            control.start()
            control.cancel()
            control.cancel()
            #expect(await waitUntil { probe.completions.count == 1 })
            // The lookup may have answered before the cancel came: a hit, or the cancellation.
            if let error = probe.completions.first?.failure { #expect(error.code == .cancelled) }
            probes.append(probe)
        }
        #expect(probes.allSatisfy { $0.completions.count == 1 } && unstarted.completions.count == 1, "a second completion")
        #expect(stub.requests.count == 1, "hits and cancelled lookups sent nothing")
    }
}

/// What a transfer of a transport reported.
final class ResponseProbe: TransferObserver, Sendable {
    private let state = Locked<(progress: [TransferProgress], completions: [Result<TransferResponse, TransferError>])>(([], []))

    var progress: [TransferProgress] { self.state.value.progress }
    var completions: [Result<TransferResponse, TransferError>] { self.state.value.completions }

    func transferDidUpdate(_ progress: TransferProgress) {
        self.state.withLock { $0.progress.append(progress) }
    }

    func transferDidComplete(with result: Result<TransferResponse, TransferError>) {
        self.state.withLock { $0.completions.append(result) }
    }
}

extension Result where Failure == TransferError {
    /// The error, when failed.
    var failure: TransferError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension TransferRunning {
    /// Runs `request`, waits for its one completion and returns the response with the progress seen.
    func fetch(_ request: TransferRequest, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> (response: TransferResponse, progress: [TransferProgress])
    {
        let probe = ResponseProbe()
        self.makeTransfer(request, observer: probe).start()
        #expect(await waitUntil { probe.completions.count == 1 }, "no completion", sourceLocation: sourceLocation)
        let result = try #require(probe.completions.first, sourceLocation: sourceLocation)
        return (try result.get(), probe.progress)
    }
}
