import CurlewTransport
import HTTPTypes

/// Which requests an ``HTTPCache`` takes part in. No I/O.
enum CacheEligibility {
    /// Whether the cache may answer `request` and store its response: a GET without a body whose
    /// response goes to memory, without `Range` or conditional fields of its own (a caller that
    /// sends `If-None-Match` wants to see the 304), and without `Cache-Control: no-store`. Any
    /// other request goes to the server untouched.
    static func isEligible(_ request: TransferRequest) -> Bool {
        guard request.head.method == .get, request.body == nil, request.destination == .memory else { return false }
        let fields = request.head.headerFields
        guard fields[.range] == nil, fields[.ifNoneMatch] == nil, fields[.ifModifiedSince] == nil,
              fields[.ifMatch] == nil, fields[.ifUnmodifiedSince] == nil, fields[.ifRange] == nil else { return false }
        return !CacheControl(fields).noStore
    }

    /// Whether `method` may change what the server holds, so its response invalidates stored ones
    /// (RFC 9111 §4.4): anything but GET, HEAD, OPTIONS and TRACE.
    static func isUnsafe(_ method: HTTPRequest.Method) -> Bool {
        method != .get && method != .head && method != .options && method != .trace
    }

    /// Whether `request` carries credentials: an `Authorization` field, or credentials curl answers
    /// challenges with.
    static func isAuthorized(_ request: TransferRequest) -> Bool {
        request.head.headerFields[.authorization] != nil || request.options.credentials != nil
    }
}
