#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// Serves the routes on one HTTP/1.x connection or one HTTP/2 stream (behind
/// `HTTP2FramePayloadToHTTP1ServerCodec`), so every route is written once for both protocols.
///
/// A request is answered once it has been fully received (its body counted and hashed on the way).
/// Bodies are written piece by piece as the channel becomes writable, so a slow or paused client
/// holds at most a few pieces in memory; pieces are zero-copy slices of ``BodyPattern``.
final class RouteHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bytes per write for bodies that are neither chunked nor dripped.
    private static let streamPieceSize = 64 * 1024
    /// Piece size of `.bytes(n, chunked: true)`.
    private static let chunkedBytesPieceSize = 16 * 1024

    private struct Request {
        let head: HTTPRequestHead
        let keepAlive: Bool
        var bodyLength = 0
        var checksum = FNV1a64()
        /// For `/multipart`: the body parsed as it streams (`nil` when it is not multipart).
        var multipart: MultipartStreamParser?

        var isHead: Bool { self.head.method == .HEAD }
    }

    /// How the body is cut into writes.
    private enum Pieces {
        /// Every piece has this many bytes (the last one may be shorter).
        case fixed(Int)
        /// `base` bytes per piece, one more for the first `extra` pieces (`.drip`).
        case spread(base: Int, extra: Int)
    }

    /// What happens after the last body byte.
    private enum Ending {
        /// Write the end of the response; close afterwards unless `keepAlive`.
        case end(keepAlive: Bool)
        /// Close without ending the response (`.closeMidBody`).
        case abort
    }

    private struct BodyStream {
        var offset: Int
        var remaining: Int
        let pieces: Pieces
        let interval: TimeAmount?
        /// The pause after the first piece, when it differs from `interval` (`.entity`'s hold).
        let firstInterval: TimeAmount?
        let ending: Ending
        /// The `.firehose` key whose record counts the bytes written, if any.
        let firehoseKey: String?
        private var pieceIndex = 0
        private var pieceRemaining = 0

        init(offset: Int, remaining: Int, pieces: Pieces, interval: TimeAmount?, firstInterval: TimeAmount? = nil,
             ending: Ending, firehoseKey: String? = nil) {
            self.offset = offset
            self.remaining = remaining
            self.pieces = pieces
            self.interval = interval
            self.firstInterval = firstInterval
            self.ending = ending
            self.firehoseKey = firehoseKey
        }

        /// The pause due after the piece just written, if any.
        var pauseAfterPiece: TimeAmount? {
            self.pieceIndex == 1 ? self.firstInterval ?? self.interval : self.interval
        }

        /// The next write: where it starts in the resource, how long it is, and whether it completes a piece
        /// (drips pause only between pieces). A `.fixed` piece is one write (one HTTP/1.1 chunk; the
        /// resolver caps piece sizes); a `.spread` piece of any size is cut into zero-copy slices.
        mutating func nextWrite() -> (offset: Int, length: Int, endsPiece: Bool) {
            let maximumWrite: Int
            switch self.pieces {
            case .fixed(let size):
                maximumWrite = size
            case .spread:
                maximumWrite = BodyPattern.maxSliceLength
            }
            if self.pieceRemaining == 0 {
                switch self.pieces {
                case .fixed(let size):
                    self.pieceRemaining = size
                case .spread(let base, let extra):
                    self.pieceRemaining = base + (self.pieceIndex < extra ? 1 : 0)
                }
                self.pieceRemaining = max(1, min(self.pieceRemaining, self.remaining))
                self.pieceIndex += 1
            }
            let start = self.offset
            let length = max(1, min(self.pieceRemaining, maximumWrite))
            self.offset += length
            self.remaining -= length
            self.pieceRemaining -= length
            return (start, length, self.pieceRemaining == 0)
        }
    }

    /// Where an `.events` response stands.
    private struct EventsProgress {
        let key: String
        let count: Int
        /// The next event to write.
        var next: Int
        let last: Int
        let ending: Ending
    }

    private enum State {
        case idle
        case receiving(Request)
        /// A `.delay` timer is running.
        case waiting
        /// Writing body pieces whenever the channel is writable.
        case streaming(BodyStream)
        /// Between two dripped pieces; the timer resumes streaming.
        case pausing(BodyStream)
        /// Writing `.events` whenever the channel is writable.
        case sendingEvents(EventsProgress)
        case closed
    }

    private let overHTTP2: Bool
    private let stats: StatsRecorder
    private let journal: RequestJournal
    private let holds: UploadHolds
    private var state = State.idle
    /// The record of the request being answered, when it was tagged.
    private var journalEntry: RequestJournal.Entry?
    private var timer: Scheduled<Void>?
    /// The head of the last non-chunked `.bytes` answer: a keep-alive benchmark asks for the same size
    /// over and over, and this spares building the headers each time.
    private var cachedBytesHead: (count: Int, version: HTTPVersion, keepAlive: Bool, head: HTTPResponseHead)?

    init(overHTTP2: Bool, stats: StatsRecorder, journal: RequestJournal, holds: UploadHolds) {
        self.overHTTP2 = overHTTP2
        self.stats = stats
        self.journal = journal
        self.holds = holds
    }

    // MARK: Channel events

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            var request = Request(head: head, keepAlive: self.overHTTP2 || head.isKeepAlive)
            if head.uri.hasPrefix("/multipart"), let contentType = head.headers.first(name: "content-type") {
                let checksums = !head.uri.contains("checksums=0")
                request.multipart = MultipartStreamParser(contentType: contentType, computesChecksums: checksums)
            }
            self.state = .receiving(request)
            if head.uri.hasPrefix("/hold-upload/"),
               case .route(.holdUpload(let key)) = ResolvedRoute.resolve(ServerRequestTarget(uri: head.uri)) {
                self.holdBody(forKey: key, context: context)
            }
            // HTTP/1.0 clients must not get an interim response (RFC 9110 §10.1.1).
            if head.version != .http1_0, head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                let interim = HTTPResponseHead(version: head.version, status: .continue)
                context.writeAndFlush(self.wrapOutboundOut(.head(interim)), promise: nil)
            }
        case .body(let buffer):
            guard case .receiving(var request) = self.state else { return }
            request.bodyLength += buffer.readableBytes
            if request.multipart != nil {
                buffer.withUnsafeReadableBytes { request.multipart?.consume($0) }
            } else {
                request.checksum.update(buffer)
            }
            self.state = .receiving(request)
        case .end:
            guard case .receiving(let request) = self.state else { return }
            self.state = .idle
            self.serve(request, context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        switch self.state {
        case .streaming(let stream):
            if context.channel.isWritable {
                self.pump(context: context)
            } else if let key = stream.firehoseKey {
                self.stats.firehoseBecameUnwritable(forKey: key)
            }
        case .sendingEvents:
            if context.channel.isWritable { self.pumpEvents(context: context) }
        default:
            break
        }
        context.fireChannelWritabilityChanged()
    }

    /// `.holdUpload`: stops reading the request until the key is released (at once if it was).
    private func holdBody(forKey key: String, context: ChannelHandlerContext) {
        _ = self.stats.nextRequest(forKey: key)
        let channel = context.channel
        let held = self.holds.hold(key) {
            channel.eventLoop.execute {
                channel.setOption(ChannelOptions.autoRead, value: true).whenSuccess { channel.read() }
            }
        }
        if held {
            _ = channel.setOption(ChannelOptions.autoRead, value: false)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.stop()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        self.stop()
        context.close(promise: nil)
    }

    private func stop() {
        self.timer?.cancel()
        self.timer = nil
        self.state = .closed
        // Closed while a tagged response was still on its way: the client left before the end.
        self.endJournalEntry(.abandoned)
    }

    private func endJournalEntry(_ outcome: TaggedRequest.Outcome) {
        guard let entry = self.journalEntry else { return }
        self.journalEntry = nil
        self.journal.ended(entry, outcome)
    }

    // MARK: Routing

    private func serve(_ request: Request, context: ChannelHandlerContext) {
        self.stats.requestServed(overHTTP2: self.overHTTP2)
        if let tag = request.head.headers.first(name: TestServer.tagHeaderName) {
            let headers = request.head.headers
            self.journalEntry = self.journal.begin(tag: tag, TaggedRequest(
                method: request.head.method.rawValue, target: request.head.uri,
                range: headers.first(name: "range"), ifRange: headers.first(name: "if-range")))
        }
        let target = ServerRequestTarget(uri: request.head.uri)
        switch ResolvedRoute.resolve(target) {
        case .route(let route):
            self.serve(route, target: target, request: request, context: context)
        case .redirectLoop(let status):
            // "Itself": the path and query exactly as requested.
            let location = String(target.path) + (target.query.isEmpty ? "" : "?" + target.query)
            self.redirect(to: location, status: status, request: request, context: context)
        case .root:
            self.respond(.ok, body: FixedBodies.root, request: request, context: context)
        case .notFound:
            self.respond(.notFound, body: FixedBodies.notFound, request: request, context: context)
        case .badRequest(let reason):
            self.respond(.badRequest, body: ByteBuffer(string: reason + "\n"), request: request, context: context)
        }
    }

    private func serve(_ route: Route, target: ServerRequestTarget, request: Request, context: ChannelHandlerContext) {
        switch route {
        case .bytes(let count, chunked: false):
            self.startBody(
                head: self.bytesHead(count: count, request: request),
                stream: BodyStream(
                    offset: 0, remaining: count, pieces: .fixed(Self.streamPieceSize), interval: nil,
                    ending: .end(keepAlive: request.keepAlive)
                ),
                request: request, context: context
            )
        case .bytes(let count, chunked: true):
            self.serveChunked(bytes: count, chunkSize: Self.chunkedBytesPieceSize, request: request, context: context)
        case .chunked(let bytes, let chunkSize):
            self.serveChunked(bytes: bytes, chunkSize: chunkSize, request: request, context: context)
        case .status(let code):
            self.serveStatus(code, request: request, context: context)
        case .echo, .upload:
            self.serveEcho(target: target, request: request, context: context)
        case .setCookie(let name, let value):
            self.serveEcho(target: target, request: request, context: context, extraHeaders: [("set-cookie", "\(name)=\(value); Path=/")])
        case .responseHeader(let name, let value):
            self.serveEcho(target: target, request: request, context: context, extraHeaders: [(name.lowercased(), value)])
        case .basicAuth(let user, let password):
            let authorization = request.head.headers.first(name: "authorization")
            self.serveAuthentication(
                accepted: HTTPAuthentication.acceptsBasic(authorization, user: user, password: password),
                challenge: HTTPAuthentication.basicChallenge, user: user, request: request, context: context)
        case .digestAuth(let user, let password):
            let authorization = request.head.headers.first(name: "authorization")
            let accepted = HTTPAuthentication.acceptsDigest(authorization, method: request.head.method.rawValue,
                                                            uri: request.head.uri, user: user, password: password)
            self.serveAuthentication(accepted: accepted, challenge: HTTPAuthentication.digestChallenge, user: user,
                                     request: request, context: context)
        case .multipart:
            self.serveMultipart(request: request, context: context)
        case .json:
            self.respond(.ok, contentType: "application/json", body: FixedBodies.json, request: request, context: context)
        case .xml:
            self.respond(.ok, contentType: "application/xml", body: FixedBodies.xml, request: request, context: context)
        case .propertyList:
            self.respond(.ok, contentType: "application/x-plist", body: FixedBodies.propertyList, request: request, context: context)
        case .delay(let milliseconds):
            self.state = .waiting
            self.timer = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(milliseconds))) {
                self.timer = nil
                guard case .waiting = self.state else { return }
                self.state = .idle
                self.respond(.ok, body: FixedBodies.delayed, request: request, context: context)
            }
        case .drip(let bytes, let chunks, let interval):
            let pieces = max(1, min(chunks, bytes))
            self.startBody(
                head: self.head(.ok, self.octetStream(contentLength: bytes), request: request),
                stream: BodyStream(
                    offset: 0, remaining: bytes, pieces: .spread(base: bytes / pieces, extra: bytes % pieces),
                    interval: .milliseconds(Int64(interval)), ending: .end(keepAlive: request.keepAlive)
                ),
                request: request, context: context
            )
        case .redirect(let count, let status):
            if count == 0 {
                self.respond(.ok, body: FixedBodies.redirected, request: request, context: context)
            } else {
                let location = "/redirect/\(count - 1)" + (status == 302 ? "" : "?status=\(status)")
                self.redirect(to: location, status: status, request: request, context: context)
            }
        case .redirectTo(let url, let status):
            self.redirect(to: url, status: status, request: request, context: context)
        case .redirectLoop:
            self.redirect(to: Route.redirectLoop.path, status: 302, request: request, context: context)
        case .entity(let size, let ranges, let etag, let lastModified, let dripChunkSize, let dripInterval, let holdFirst, let version):
            self.serveEntity(
                size: size, ranges: ranges, etag: EntityValidators.etag(base: etag, version: version),
                lastModified: lastModified ? EntityValidators.lastModified(version: version) : nil,
                dripChunkSize: dripChunkSize, dripInterval: dripInterval,
                holds: holdFirst && self.journalEntry?.isFirstOfItsTag == true, contentOffset: version - 1,
                request: request, context: context
            )
        case .closeMidBody(let bytes):
            self.startBody(
                head: self.head(.ok, self.octetStream(contentLength: bytes), request: request),
                stream: BodyStream(
                    offset: 0, remaining: bytes / 2, pieces: .fixed(Self.streamPieceSize), interval: nil,
                    ending: request.isHead ? .end(keepAlive: request.keepAlive) : .abort
                ),
                request: request, context: context
            )
        case .reset:
            self.resetConnection(context: context)
        case .stats:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let json = (try? encoder.encode(self.stats.snapshot)).map { ByteBuffer(bytes: $0) } ?? ByteBuffer(string: "{}")
            self.respond(.ok, contentType: "application/json", body: json, request: request, context: context)
        case .flaky(let key, let failures, let status, let retryAfter):
            guard self.stats.nextRequest(forKey: key) > failures else {
                self.serveStatus(status, retryAfter: retryAfter, request: request, context: context)
                return
            }
            self.serveEcho(target: target, request: request, context: context)
        case .bearer(let token):
            if request.head.headers.first(name: "authorization") == "Bearer \(token)" {
                self.respond(.ok, body: ByteBuffer(string: "authorized\n"), request: request, context: context)
            } else {
                let body = ByteBuffer(string: "unauthorized\n")
                let headers = HTTPHeaders([("content-type", "text/plain"), ("www-authenticate", "Bearer"),
                                           ("content-length", String(body.readableBytes))])
                self.respond(head: self.head(.unauthorized, headers, request: request), body: body,
                             request: request, context: context)
            }
        case .cached(let key, let cacheControl, let etag, let lastModified, let vary):
            self.serveCached(key: key, cacheControl: cacheControl, etag: etag ? "\"\(key)\"" : nil,
                             lastModified: lastModified ? EntityValidators.lastModified(version: 1) : nil, vary: vary,
                             request: request, context: context)
        case .hugeHeaders(let kilobytes):
            var headers = HugeHeaders.make(kilobytes: kilobytes)
            headers.add(name: "content-type", value: "text/plain")
            headers.add(name: "content-length", value: String(FixedBodies.hugeHeaders.readableBytes))
            self.respond(head: self.head(.ok, headers, request: request), body: FixedBodies.hugeHeaders, request: request, context: context)
        case .firehose(let key, let bytes):
            self.startBody(
                head: self.head(.ok, self.octetStream(contentLength: bytes), request: request),
                stream: BodyStream(
                    offset: 0, remaining: bytes, pieces: .fixed(Self.streamPieceSize), interval: nil,
                    ending: .end(keepAlive: request.keepAlive), firehoseKey: key
                ),
                request: request, context: context
            )
        case .events(let key, let count, let dropAfter, let retryMilliseconds):
            self.serveEvents(key: key, count: count, dropAfter: dropAfter, retryMilliseconds: retryMilliseconds,
                             request: request, context: context)
        case .holdUpload:
            self.serveEcho(target: target, request: request, context: context)
        }
    }

    private func serveEvents(
        key: String, count: Int, dropAfter: Int?, retryMilliseconds: Int?, request: Request, context: ChannelHandlerContext
    ) {
        let lastEventID = request.head.headers.first(name: "last-event-id")
        _ = self.stats.nextRequest(forKey: key)
        let lastEventSent = self.stats.eventsRequested(forKey: key, lastEventID: lastEventID)
        switch EventStream.plan(count: count, dropAfter: dropAfter, lastEventID: lastEventID, lastEventSent: lastEventSent) {
        case .noContent:
            self.serveStatus(204, request: request, context: context)
        case .events(let first, let last, let endsNormally):
            let (headers, keepAlive) = self.unframedHeaders(contentType: "text/event-stream", request: request)
            var eventHeaders = headers
            eventHeaders.add(name: "cache-control", value: "no-store")
            let head = self.head(.ok, eventHeaders, request: request, keepAlive: keepAlive)
            self.noteStatus(head)
            context.write(self.wrapOutboundOut(.head(head)), promise: nil)
            if request.isHead {
                self.finish(.end(keepAlive: keepAlive), context: context)
                return
            }
            let preamble = EventStream.preamble(retryMilliseconds: retryMilliseconds)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: preamble)))), promise: nil)
            self.state = .sendingEvents(EventsProgress(
                key: key, count: count, next: first, last: last,
                ending: endsNormally ? .end(keepAlive: keepAlive) : .abort))
            self.pumpEvents(context: context)
        }
    }

    private func serveChunked(bytes: Int, chunkSize: Int, request: Request, context: ChannelHandlerContext) {
        let (headers, keepAlive) = self.unframedHeaders(contentType: "application/octet-stream", request: request)
        self.startBody(
            head: self.head(.ok, headers, request: request, keepAlive: keepAlive),
            stream: BodyStream(offset: 0, remaining: bytes, pieces: .fixed(chunkSize), interval: nil, ending: .end(keepAlive: keepAlive)),
            request: request, context: context
        )
    }

    private func serveStatus(_ code: Int, retryAfter: String? = nil, request: Request, context: ChannelHandlerContext) {
        guard code != 0 else {
            self.resetConnection(context: context)
            return
        }
        let status = HTTPResponseStatus(statusCode: code)
        if let retryAfter {
            let body = ByteBuffer(string: "\(code) \(status.reasonPhrase)\n")
            let headers = HTTPHeaders([("content-type", "text/plain"), ("content-length", String(body.readableBytes)),
                                       ("retry-after", retryAfter)])
            self.respond(head: self.head(status, headers, request: request), body: body, request: request, context: context)
            return
        }
        switch code {
        case 204, 304:
            // No body and no Content-Length (RFC 9110 §8.6 forbids it on 204).
            self.respond(head: self.head(status, HTTPHeaders(), request: request), body: nil, request: request, context: context)
        case 205:
            let head = self.head(status, HTTPHeaders([("content-length", "0")]), request: request)
            self.respond(head: head, body: nil, request: request, context: context)
        default:
            self.respond(status, body: ByteBuffer(string: "\(code) \(status.reasonPhrase)\n"), request: request, context: context)
        }
    }

    private func serveAuthentication(
        accepted: Bool, challenge: String, user: String, request: Request, context: ChannelHandlerContext
    ) {
        if accepted {
            var text = "{\"authenticated\":true,\"user\":"
            JSONText.appendString(user, to: &text)
            text += "}"
            self.respond(.ok, contentType: "application/json", body: ByteBuffer(string: text), request: request, context: context)
        } else {
            self.respond(.unauthorized, body: ByteBuffer(string: "401 Unauthorized\n"),
                         extraHeaders: [("www-authenticate", challenge)], request: request, context: context)
        }
    }

    private func serveEcho(
        target: ServerRequestTarget, request: Request, context: ChannelHandlerContext, extraHeaders: [(String, String)] = []
    ) {
        let reply = EchoReply(
            method: request.head.method.rawValue,
            path: String(target.path),
            query: String(target.query),
            headers: request.head.headers.map { [$0.name, $0.value] },
            bodyLength: request.bodyLength,
            bodyChecksum: request.checksum.hexString
        )
        self.respond(.ok, contentType: "application/json", body: ByteBuffer(string: reply.json()), extraHeaders: extraHeaders,
                     request: request, context: context)
    }

    private func serveMultipart(request: Request, context: ChannelHandlerContext) {
        guard let parser = request.multipart else {
            let reason = ByteBuffer(string: "/multipart needs a multipart/form-data body with a boundary\n")
            self.respond(.badRequest, body: reason, request: request, context: context)
            return
        }
        let reply: MultipartEchoReply
        switch parser.finish() {
        case .success(let parts):
            reply = MultipartEchoReply(
                parts: parts.map { part in
                    MultipartEchoReply.Part(name: part.name, filename: part.filename, contentType: part.contentType,
                                            size: part.size, checksum: part.checksum.hexString)
                },
                bodyLength: request.bodyLength, error: nil)
        case .failure(let error):
            reply = MultipartEchoReply(parts: parser.parts.map { part in
                MultipartEchoReply.Part(name: part.name, filename: part.filename, contentType: part.contentType,
                                        size: part.size, checksum: part.checksum.hexString)
            }, bodyLength: request.bodyLength, error: error.reason)
        }
        self.respond(.ok, contentType: "application/json", body: ByteBuffer(string: reply.json()), request: request, context: context)
    }

    private func serveEntity(
        size: Int, ranges: Bool, etag: String?, lastModified: String?, dripChunkSize: Int?, dripInterval: Int,
        holds: Bool, contentOffset: Int, request: Request, context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/octet-stream")
        if let etag { headers.add(name: "etag", value: etag) }
        if let lastModified { headers.add(name: "last-modified", value: lastModified) }
        if ranges { headers.add(name: "accept-ranges", value: "bytes") }

        var decision = RangeDecision.full
        if ranges, request.head.method == .GET || request.head.method == .HEAD {
            decision = RangeDecision.decide(
                range: request.head.headers.first(name: "range"),
                ifRange: request.head.headers.first(name: "if-range"),
                size: size, etag: etag, lastModified: lastModified
            )
        }
        let status: HTTPResponseStatus
        var first = 0
        var length = size
        switch decision {
        case .full:
            status = .ok
        case .partial(let from, let to):
            status = .partialContent
            first = from
            length = to - from + 1
            headers.add(name: "content-range", value: "bytes \(from)-\(to)/\(size)")
        case .unsatisfiable:
            status = .rangeNotSatisfiable
            length = 0
            headers.add(name: "content-range", value: "bytes */\(size)")
        }
        headers.add(name: "content-length", value: String(length))
        let dripping = dripChunkSize != nil
        self.startBody(
            head: self.head(status, headers, request: request),
            stream: BodyStream(
                offset: contentOffset + first, remaining: length,
                pieces: .fixed(dripChunkSize ?? Self.streamPieceSize),
                interval: dripping && dripInterval > 0 ? .milliseconds(Int64(dripInterval)) : nil,
                firstInterval: dripping && holds ? .milliseconds(Int64(Route.entityHold.components.seconds * 1000)) : nil,
                ending: .end(keepAlive: request.keepAlive)
            ),
            request: request, context: context
        )
    }

    private func serveCached(
        key: String, cacheControl: String?, etag: String?, lastModified: String?, vary: String?,
        request: Request, context: ChannelHandlerContext
    ) {
        let number = self.stats.nextRequest(forKey: key)
        var headers = HTTPHeaders([("x-request-number", String(number))])
        if let cacheControl { headers.add(name: "cache-control", value: cacheControl) }
        if let etag { headers.add(name: "etag", value: etag) }
        if let lastModified { headers.add(name: "last-modified", value: lastModified) }
        if let vary { headers.add(name: "vary", value: vary) }
        let requestHeaders = request.head.headers
        let ifNoneMatch = requestHeaders["if-none-match"].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var notModified = false
        if request.head.method == .GET || request.head.method == .HEAD {
            if !ifNoneMatch.isEmpty {
                notModified = ifNoneMatch.contains("*") || etag.map { ifNoneMatch.contains($0) || ifNoneMatch.contains("W/" + $0) } ?? false
            } else if let lastModified, let since = requestHeaders.first(name: "if-modified-since") {
                notModified = since == lastModified
            }
        }
        if notModified {
            self.respond(head: self.head(.notModified, headers, request: request), body: nil, request: request, context: context)
            return
        }
        var text = "cached \(key) #\(number)"
        if let vary { text += " " + requestHeaders[vary].joined(separator: ", ") }
        self.respond(.ok, body: ByteBuffer(string: text + "\n"), extraHeaders: headers.map { ($0.name, $0.value) },
                     request: request, context: context)
    }

    private func redirect(to location: String, status: Int, request: Request, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "location", value: location)
        headers.add(name: "content-type", value: "text/plain")
        headers.add(name: "content-length", value: String(FixedBodies.redirecting.readableBytes))
        let head = self.head(HTTPResponseStatus(statusCode: status), headers, request: request)
        self.respond(head: head, body: FixedBodies.redirecting, request: request, context: context)
    }

    // MARK: Writing

    /// Headers for a body of unknown length: chunked on HTTP/1.1; on HTTP/1.0, which has no chunks,
    /// ended by closing the connection (so no keep-alive); plain DATA frames on HTTP/2.
    private func unframedHeaders(contentType: String, request: Request) -> (HTTPHeaders, keepAlive: Bool) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: contentType)
        var keepAlive = request.keepAlive
        if !self.overHTTP2 {
            if request.head.version == .http1_0 {
                keepAlive = false
            } else {
                headers.add(name: "transfer-encoding", value: "chunked")
            }
        }
        return (headers, keepAlive)
    }

    private func octetStream(contentLength: Int) -> HTTPHeaders {
        HTTPHeaders([("content-type", "application/octet-stream"), ("content-length", String(contentLength))])
    }

    private func bytesHead(count: Int, request: Request) -> HTTPResponseHead {
        if let cached = self.cachedBytesHead, cached.count == count, cached.version == request.head.version,
            cached.keepAlive == request.keepAlive
        {
            return cached.head
        }
        let head = self.head(.ok, self.octetStream(contentLength: count), request: request)
        self.cachedBytesHead = (count, request.head.version, request.keepAlive, head)
        return head
    }

    /// A response head for `request`, with the `Connection` header HTTP/1.x needs when keep-alive
    /// differs from the version's default.
    private func head(
        _ status: HTTPResponseStatus, _ headers: HTTPHeaders, request: Request, keepAlive: Bool? = nil
    ) -> HTTPResponseHead {
        var headers = headers
        let keepAlive = keepAlive ?? request.keepAlive
        if !self.overHTTP2 {
            if request.head.version == .http1_0, keepAlive {
                headers.add(name: "connection", value: "keep-alive")
            } else if request.head.version != .http1_0, !keepAlive {
                headers.add(name: "connection", value: "close")
            }
        }
        return HTTPResponseHead(version: request.head.version, status: status, headers: headers)
    }

    private func respond(
        _ status: HTTPResponseStatus, contentType: String = "text/plain", body: ByteBuffer,
        extraHeaders: [(String, String)] = [], request: Request, context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders([("content-type", contentType), ("content-length", String(body.readableBytes))])
        headers.add(contentsOf: extraHeaders)
        self.respond(head: self.head(status, headers, request: request), body: body, request: request, context: context)
    }

    private func respond(head: HTTPResponseHead, body: ByteBuffer?, request: Request, context: ChannelHandlerContext) {
        self.noteStatus(head)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if let body, body.readableBytes > 0, !request.isHead {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        self.finish(.end(keepAlive: request.keepAlive), context: context)
    }

    private func startBody(head: HTTPResponseHead, stream: BodyStream, request: Request, context: ChannelHandlerContext) {
        self.noteStatus(head)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if request.isHead || stream.remaining <= 0 {
            self.finish(stream.ending, context: context)
        } else {
            self.state = .streaming(stream)
            self.pump(context: context)
        }
    }

    private func noteStatus(_ head: HTTPResponseHead) {
        if let entry = self.journalEntry { self.journal.answered(entry, status: Int(head.status.code)) }
    }

    /// Writes body pieces while the channel is writable; pauses between pieces of a drip.
    private func pump(context: ChannelHandlerContext) {
        guard case .streaming(var stream) = self.state else { return }
        while stream.remaining > 0 {
            guard context.channel.isWritable else {
                // `channelWritabilityChanged` resumes.
                self.state = .streaming(stream)
                context.flush()
                return
            }
            let piece = stream.nextWrite()
            let buffer = BodyPattern.buffer(offset: piece.offset, length: piece.length, allocator: context.channel.allocator)
            if let key = stream.firehoseKey {
                // Flushed piece by piece: TLS completes the promises of one flush together, once all of
                // it has left, so a larger flush would count nothing while the client stalls.
                let stats = self.stats
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.whenSuccess { stats.firehoseWrote(piece.length, forKey: key) }
                // The flush may change the writability at once, and `channelWritabilityChanged` then
                // pumps from the saved state: save it first, and go on from wherever that pump left it.
                self.state = .streaming(stream)
                context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: written)
                guard case .streaming(let current) = self.state else { return }
                stream = current
            } else {
                context.write(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            }
            if piece.endsPiece, let interval = stream.pauseAfterPiece, stream.remaining > 0 {
                self.state = .pausing(stream)
                context.flush()
                self.timer = context.eventLoop.assumeIsolated().scheduleTask(in: interval) {
                    self.timer = nil
                    guard case .pausing(let paused) = self.state else { return }
                    self.state = .streaming(paused)
                    self.pump(context: context)
                }
                return
            }
        }
        self.finish(stream.ending, context: context)
    }

    /// Writes events while the channel is writable, then ends the response as planned.
    private func pumpEvents(context: ChannelHandlerContext) {
        guard case .sendingEvents(var progress) = self.state else { return }
        while progress.next <= progress.last {
            guard context.channel.isWritable else {
                // `channelWritabilityChanged` resumes.
                self.state = .sendingEvents(progress)
                context.flush()
                return
            }
            let event = context.channel.allocator.buffer(string: EventStream.event(progress.next))
            context.write(self.wrapOutboundOut(.body(.byteBuffer(event))), promise: nil)
            if progress.next == progress.count { self.stats.lastEventSent(forKey: progress.key) }
            progress.next += 1
        }
        self.finish(progress.ending, context: context)
    }

    private func finish(_ ending: Ending, context: ChannelHandlerContext) {
        switch ending {
        case .end(keepAlive: true):
            self.state = .idle
            self.endJournalEntry(.answered)
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        case .end(keepAlive: false):
            self.state = .closed
            self.endJournalEntry(.answered)
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .abort:
            // Close once what was written has left, so the client really gets what came before the cut;
            // on HTTP/2 once the client has read it too (see `HTTP2PingRoundTrip`).
            self.state = .closed
            self.endJournalEntry(.cutShort)
            let written = context.eventLoop.makePromise(of: Void.self)
            let nothing = context.channel.allocator.buffer(capacity: 0)
            context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(nothing))), promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in
                guard self.overHTTP2, let connection = context.channel.parent,
                      let pings = try? connection.pipeline.syncOperations.handler(type: HTTP2PingRoundTrip.self) else {
                    context.close(promise: nil)
                    return
                }
                pings.roundTrip(on: context.eventLoop).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            }
        }
    }

    /// `.reset`: RST instead of an answer. HTTP/2 resets just the stream (closing a stream channel
    /// early sends `RST_STREAM`); HTTP/1.x sets `SO_LINGER` 0 and closes below any TLS handler, so the
    /// kernel sends a TCP RST and no `close_notify` precedes it.
    private func resetConnection(context: ChannelHandlerContext) {
        self.state = .closed
        self.endJournalEntry(.cutShort)
        guard !self.overHTTP2, let provider = context.channel as? SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
            if let tls = try? context.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self) {
                // Closing from the TLS handler's context starts below it: straight to the socket.
                tls.close(promise: nil)
            } else {
                context.close(promise: nil)
            }
        }
    }
}
