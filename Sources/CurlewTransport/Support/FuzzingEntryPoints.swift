import Foundation
import HTTPTypes

/// Entry points for the libFuzzer targets in `Fuzz/` (a package of its own, so `swift test` never
/// builds them): the parsers and planners that read what a server sends, driven by arbitrary bytes.
/// Each checks the invariants its decisions promise and traps when one breaks — a trap is what the
/// fuzzer reports. Not API: `@_spi(Fuzzing) import CurlewTransport`.
@_spi(Fuzzing)
public enum FuzzingEntryPoints {
    /// Feeds `bytes`, cut into lines at each LF, to the response-head parser (as curl's header
    /// callback would), then asks the resume planner and `Retry-After` about the head it made.
    public static func responseHead(_ bytes: UnsafeRawBufferPointer) {
        var parser = ResponseHeadParser(limit: 4096)
        var start = 0
        var size = 0
        while start < bytes.count {
            let end = (bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? (bytes.count - 1)) + 1
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            size += line.count
            switch parser.consume(line) {
            case .needMore, .informational:
                break
            case .tooLarge:
                precondition(size > 4096, "a head of \(size) bytes was called too large")
                return
            case .malformed, .invalidFraming:
                return
            case .complete(let head):
                precondition(size <= 4096, "a head of \(size) bytes passed a 4096-byte limit")
                precondition((100...999).contains(head.status.code))
                let lengths = head.headerFields[values: .contentLength]
                precondition(lengths.allSatisfy { ResponseHeadParser.contentLength($0) == parser.facts.contentLength },
                             "a head with Content-Length \(lengths) passed as \(String(describing: parser.facts.contentLength))")
                if let validator = ResumeValidator(head) {
                    precondition(head.status.code == 200)
                    _ = ResumePlanner.decide(head, for: ResumeRequest(offset: 10, validator: validator))
                }
                if let retryAfter = head.headerFields[.retryAfter] {
                    _ = RetryAfter.parse(retryAfter, now: Date(timeIntervalSince1970: 1_000_000_000))
                }
                return
            }
            start = end
        }
    }

    /// The first byte picks the status (301, 302, 303, 307, 308) and the method; the rest is the
    /// `Location` (resolved already, as curl hands it over). Checks that credentials and a header
    /// marked secret never cross an origin, only `http`/`https` targets are followed, and a body is
    /// dropped exactly when the method becomes GET.
    public static func redirect(_ bytes: UnsafeRawBufferPointer) {
        guard let selector = bytes.first else { return }
        let statuses = [301, 302, 303, 307, 308]
        let methods: [HTTPRequest.Method] = [.get, .post, .put, .head]
        let status = statuses[Int(selector) % statuses.count]
        let method = methods[Int(selector / 8) % methods.count]
        let location = String(decoding: bytes.dropFirst(), as: UTF8.self)
        guard let target = try? RequestTarget(validating: "http://origin.test:8080/start"),
              let apiKey = HTTPField.Name("X-Api-Key") else {
            preconditionFailure("the fixed origin or header name is invalid")
        }
        var fields = HTTPFields()
        fields[.authorization] = "Basic c2VjcmV0"
        fields[.cookie] = "session=1"
        fields[.contentType] = "text/plain"
        fields[apiKey] = "secret"
        let attempt = Attempt(target: target, method: method, headerFields: fields, sendsBody: method != .get && method != .head,
                              redirectCount: 0, resume: nil)
        guard let next = try? RedirectPlanner.next(after: attempt, status: status, location: location,
                                                   secretHeaderNames: [apiKey]) else { return }
        precondition(next.target.scheme == "http" || next.target.scheme == "https", "followed to \(next.target.scheme)")
        precondition(next.redirectCount == 1)
        let sameOrigin = next.target.scheme == "http" && next.target.authority.lowercased() == "origin.test:8080"
        if !sameOrigin {
            precondition(next.headerFields[.authorization] == nil && next.headerFields[.cookie] == nil
                         && next.headerFields[apiKey] == nil,
                         "credentials sent across origins to \(next.target.string)")
        }
        if next.method == .get && method != .get {
            precondition(!next.sendsBody && next.headerFields[.contentType] == nil, "a body kept on a GET")
        }
        precondition((try? RequestTarget(validating: next.target.string)) != nil, "a target that does not validate again")
    }

    /// Bytes become a range reply (status, `ETag`, `Last-Modified`, `Content-Range`) to a resume
    /// from a known offset. Checks that a body is appended only to a 206 for the same entity from
    /// exactly that offset.
    public static func resume(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 3 else { return }
        let statuses = [200, 206, 416, 404, 500]
        let status = statuses[Int(bytes[0]) % statuses.count]
        let offset = Int64(bytes[1]) * 97
        let text = String(decoding: bytes.dropFirst(3), as: UTF8.self)
        let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        var head = HTTPResponse(status: .init(code: status))
        if bytes[2] & 1 == 1, let tag = parts.first { head.headerFields[.eTag] = tag }
        if bytes[2] & 2 == 2, parts.count > 1 { head.headerFields[.lastModified] = parts[1] }
        if parts.count > 2 { head.headerFields[.contentRange] = parts[2] }
        let validator = ResumeValidator(entityTag: bytes[2] & 4 == 4 ? "\"v1\"" : nil, lastModified: "Sat, 01 Jan 2000 00:00:00 GMT")
        let decision = ResumePlanner.decide(head, for: ResumeRequest(offset: offset, validator: validator))
        if decision == .append {
            precondition(status == 206)
            precondition(ResumePlanner.contentRangeStart(head.headerFields[.contentRange]) == offset)
            if let tag = validator.entityTag { precondition(head.headerFields[.eTag] == tag) }
        }
        if case .skip(let count) = decision { precondition(status == 200 && count == offset) }
    }
}
