// The routes for streamed bodies: the firehose and what the server records of it, Server-Sent
// Events (exact bytes, resumption, cuts, 204), and an upload the server holds back.
import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

@Suite("TestServer streaming routes")
struct StreamingRoutesTests {
    static func key(_ name: String) -> String {
        "\(name)-\(UUID().uuidString.prefix(8))"
    }

    // MARK: Firehose

    @Test("a firehose sends its body and counts what it wrote")
    func firehose() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let key = Self.key("whole")
        let port = server.port
        let response = try await onThreadOfItsOwn {
            try RawConnection(port: port).send("GET \(Route.firehose(key: key, bytes: 1_000_000).path) HTTP/1.1\r\nHost: x\r\n\r\n")
        }
        #expect(response.status == 200)
        #expect(response.header("content-length") == "1000000")
        #expect(Data(response.body) == Data(TestServer.expectedBody(count: 1_000_000)))
        #expect(Route.firehose(key: key, bytes: 5).expectedBody == TestServer.expectedBody(count: 5))
        #expect(await waitUntil { server.firehose(key).written == 1_000_000 })
        #expect(server.firehose("never-asked") == FirehoseRecord())
        await server.shutdownGracefully()
    }

    @Test("a client that reads nothing stops the firehose; once it reads, the rest comes, byte for byte")
    func firehoseStops() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let key = Self.key("stuck")
        let total = 64 << 20
        let connection = try RawConnection(port: server.port)
        try connection.sendWithoutReading("GET \(Route.firehose(key: key, bytes: total).path) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await waitUntil { server.firehose(key).becameUnwritable > 0 })
        #expect(await holdsThroughout(.milliseconds(200)) { server.firehose(key).written < total / 2 },
                "a client that reads nothing took \(server.firehose(key).written) bytes")
        let stuck = server.firehose(key).written
        #expect(stuck > 0)
        let response = try await onThreadOfItsOwn { try connection.receive() }
        #expect(response.body.count == total)
        let identical = response.body == TestServer.expectedBody(count: total)
        #expect(identical, "the pieces written around the stall are the right ones")
        #expect(await waitUntil { server.firehose(key).written == total })
        #expect(server.firehose(key).becameUnwritable >= 1)
        await server.shutdownGracefully()
    }

    // MARK: Server-Sent Events

    /// The body of a chunked HTTP/1.1 response read until the server closed, and whether it ended
    /// with the last chunk (a clean end) or was cut.
    static func dechunk(_ raw: [UInt8]) throws -> (head: String, body: String, complete: Bool) {
        let separator = Array("\r\n\r\n".utf8)
        let headEnd = try #require(raw.firstRange(of: separator)).upperBound
        var rest = raw[headEnd...]
        var body: [UInt8] = []
        while let lineEnd = rest.firstRange(of: Array("\r\n".utf8)) {
            let size = try #require(Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self), radix: 16))
            let start = lineEnd.upperBound
            if size == 0 { return (String(decoding: raw[..<headEnd], as: UTF8.self), String(decoding: body, as: UTF8.self), true) }
            guard rest.endIndex - start >= size + 2 else { break }
            body += rest[start..<(start + size)]
            rest = rest[(start + size + 2)...]
        }
        #expect(rest.isEmpty, "a partial chunk: \(rest.count) bytes")
        return (String(decoding: raw[..<headEnd], as: UTF8.self), String(decoding: body, as: UTF8.self), false)
    }

    /// One `.events` request over HTTP/1.1 with `Connection: close`, read until the server closes.
    static func events(_ route: Route, lastEventID: String?, port: Int) async throws -> (status: Int, head: String, body: String, complete: Bool) {
        let request = "GET \(route.path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            + (lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? "") + "\r\n"
        let raw = try await onThreadOfItsOwn { () -> [UInt8] in
            let connection = try RawConnection(port: port)
            try connection.sendWithoutReading(request)
            return try connection.readUntilClosed()
        }
        let status = Int(String(decoding: raw.dropFirst(9).prefix(3), as: UTF8.self)) ?? 0
        guard status == 200 else { return (status, String(decoding: raw, as: UTF8.self), "", true) }
        let (head, body, complete) = try Self.dechunk(raw)
        return (status, head.lowercased(), body, complete)
    }

    static func events(_ ids: ClosedRange<Int>) -> String {
        ids.map(EventStream.event).joined()
    }

    @Test("events: the exact bytes, with the headers an event source needs")
    func eventsBytes() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let key = Self.key("plain")
        let reply = try await Self.events(.events(key: key, count: 3), lastEventID: nil, port: server.port)
        #expect(reply.status == 200)
        #expect(reply.head.contains("content-type: text/event-stream\r\n"))
        #expect(reply.head.contains("cache-control: no-store\r\n"))
        #expect(reply.head.contains("transfer-encoding: chunked\r\n"))
        #expect(reply.body == ": curlew\n\n" + Self.events(1...3))
        #expect(EventStream.event(2) == "id: 2\nevent: tick\ndata: 2\ndata: second line\n\n")
        #expect(reply.complete, "without drop the response ends normally")
        #expect(server.requests(forKey: key) == 1)
        #expect(server.lastEventIDs(forKey: key) == [nil])
        await server.shutdownGracefully()
    }

    @Test("events: Last-Event-ID resumes after it; past the count, or once the last event went out, 204")
    func eventsResume() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let key = Self.key("resume")
        let route = Route.events(key: key, count: 3, retryMilliseconds: 250)
        let resumed = try await Self.events(route, lastEventID: "1", port: server.port)
        #expect(resumed.body == ": curlew\nretry: 250\n\n" + Self.events(2...3))
        #expect(try await Self.events(route, lastEventID: "3", port: server.port).status == 204)
        #expect(try await Self.events(route, lastEventID: "99", port: server.port).status == 204)
        #expect(try await Self.events(route, lastEventID: nil, port: server.port).status == 204,
                "the last event went out on an earlier connection")
        let other = Route.events(key: Self.key("garbage"), count: 2)
        #expect(try await Self.events(other, lastEventID: "x7", port: server.port).body == ": curlew\n\n" + Self.events(1...2),
                "a Last-Event-ID that is not a number counts as none")
        #expect(server.lastEventIDs(forKey: key) == ["1", "3", "99", nil])
        #expect(server.requests(forKey: key) == 4)
        await server.shutdownGracefully()
    }

    @Test("events with drop: each connection is cut after its share, except the one that sends the last event")
    func eventsDrop() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let key = Self.key("drop")
        let route = Route.events(key: key, count: 5, dropAfter: 2)
        var replies: [(status: Int, head: String, body: String, complete: Bool)] = []
        var lastEventID: String?
        for _ in 0..<4 {
            let reply = try await Self.events(route, lastEventID: lastEventID, port: server.port)
            replies.append(reply)
            lastEventID = reply.body.split(separator: "\n").last { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
        }
        #expect(replies.map(\.body) == [": curlew\n\n" + Self.events(1...2), ": curlew\n\n" + Self.events(3...4),
                                       ": curlew\n\n" + Self.events(5...5), ""])
        #expect(replies.map(\.complete) == [false, false, true, true], "cut without the last chunk, then a clean end")
        #expect(replies.map(\.status) == [200, 200, 200, 204])
        #expect(server.lastEventIDs(forKey: key) == [nil, "2", "4", "5"])
        await server.shutdownGracefully()
    }

    @Test("events with drop over HTTP/2: the stream is reset after the events of the connection")
    func eventsDropOverHTTP2() async throws {
        let server = try TestServer.start(.init(enableTLS: false))
        try await withEngine(on: BackendConfiguration.dispatch.makeScheduler()) { engine in
            let key = Self.key("h2")
            var request = TransferRequest(url: server.h2cURL(.events(key: key, count: 5, dropAfter: 2)))
            request.options.httpVersion = .http2PriorKnowledge
            let response = try await engine.stream(request)
            #expect(response.head.headerFields[.contentType] == "text/event-stream")
            #expect(response.head.headerFields[.cacheControl] == "no-store")
            var received = Data()
            let error = await #expect(throws: TransferError.self) {
                for try await chunk in response.body { received.append(chunk) }
            }
            #expect(String(decoding: received, as: UTF8.self) == ": curlew\n\n" + Self.events(1...2))
            #expect(error?.code != .cancelled)
            #expect(server.stats.http2Requests == 1)
        }
        await server.shutdownGracefully()
    }

    @Test("what each request of an event stream gets", arguments: [
        (3, nil, nil, false, EventStream.Plan.events(first: 1, last: 3, endsNormally: true)),
        (3, nil, "2", false, .events(first: 3, last: 3, endsNormally: true)),
        (3, nil, "3", false, .noContent),
        (3, nil, nil, true, .noContent),
        (0, nil, nil, false, .noContent),
        (5, 2, nil, false, .events(first: 1, last: 2, endsNormally: false)),
        (5, 2, "3", false, .events(first: 4, last: 5, endsNormally: true)),
        (5, 2, "-1", false, .events(first: 1, last: 2, endsNormally: false)),
        (5, 9, nil, false, .events(first: 1, last: 5, endsNormally: true)),
    ] as [(Int, Int?, String?, Bool, EventStream.Plan)])
    func eventsPlan(count: Int, dropAfter: Int?, lastEventID: String?, lastEventSent: Bool, expected: EventStream.Plan) {
        #expect(EventStream.plan(count: count, dropAfter: dropAfter, lastEventID: lastEventID, lastEventSent: lastEventSent) == expected)
    }

    // MARK: Held uploads

    @Test("a held upload is not read until released, then answered like echo; a released key holds nothing")
    func holdUpload() async throws {
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        try await withEngine(on: BackendConfiguration.dispatch.makeScheduler()) { engine in
            let key = Self.key("hold")
            let body = Data(TestServer.expectedBody(count: 16 << 20))
            let recorder = TransferRecorder(engine)
            engine.makeTransfer(TransferRequest(url: server.url(.holdUpload(key: key)), method: .post, body: .data(body)),
                                delegate: recorder).start()
            #expect(await waitUntil { server.requests(forKey: key) == 1 })
            #expect(await holdsThroughout(.milliseconds(300)) { recorder.completionCount == 0 })
            let stalled = recorder.events.value.progress.last?.bytesSent ?? 0
            #expect(stalled < Int64(body.count), "the whole body went into a server that reads none of it")
            server.releaseUpload(key)
            let response = try #require(await recorder.result()).get()
            let echo = try JSONDecoder().decode(EchoReply.self, from: try #require(response.body))
            #expect(echo.bodyLength == body.count)
            #expect(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(body)))

            // Released: later requests go straight through.
            let again = try await engine.execute(TransferRequest(url: server.url(.holdUpload(key: key)), method: .put, body: .data(Data("x".utf8))))
            #expect(again.head.status == .ok)
            #expect(server.requests(forKey: key) == 2)
        }
        await server.shutdownGracefully()
    }

    // MARK: Parameters

    @Test("paths, and bad parameters refused with 400")
    func parameters() async throws {
        #expect(Route.firehose(key: "k", bytes: 10).path == "/firehose/k?bytes=10")
        #expect(Route.events(key: "k", count: 3).path == "/events/k?count=3")
        #expect(Route.events(key: "k", count: 3, dropAfter: 1, retryMilliseconds: 20).path == "/events/k?count=3&drop=1&retry=20")
        #expect(Route.holdUpload(key: "k").path == "/hold-upload/k")
        let server = try TestServer.start(.init(enableTLS: false, enableH2C: false))
        let connection = try RawConnection(port: server.port)
        for path in [
            "/firehose/k", "/firehose/k?bytes=-1", "/firehose/a.b?bytes=1", "/events/k", "/events/k?count=x",
            "/events/k?count=3&drop=0", "/events/k?count=3&retry=99999999", "/events/k?count=1000001", "/hold-upload",
        ] {
            #expect(try connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n").status == 400, "\(path)")
        }
        await server.shutdownGracefully()
    }
}
