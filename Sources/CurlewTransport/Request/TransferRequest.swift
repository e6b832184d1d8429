import Foundation
import HTTPTypes
import HTTPTypesFoundation

/// Everything one transfer needs: the request head, an optional body, where the response body goes,
/// and the options.
///
/// ```swift
/// var request = TransferRequest(url: URL(string: "https://example.com/items")!, method: .post)
/// request.head.headerFields[.contentType] = "application/json"
/// request.body = .data(Data(#"{"name":"curlew"}"#.utf8))
/// request.options.timeout = .seconds(30)
/// ```
///
/// **Header values never carry CR, LF or NUL onto the wire**, whichever way they are set, and the two
/// ways differ only in what the caller hears. The string-taking APIs — ``init(method:url:headers:body:destination:options:)``
/// and ``setHeaderField(_:value:)`` — are for untrusted input and throw
/// ``TransferError/Code/invalidRequest``. `HTTPFields` cannot fail: swift-http-types replaces those
/// bytes with spaces when the value is assigned (`"a\r\nb"` is sent as `"a  b"`), before Curlew sees it.
///
/// **Credentials in the URL** (`http://user:password@host/`) are sent as HTTP Basic authentication,
/// as curl and Python's requests do: the initializers that take a URL turn them into an
/// `Authorization: Basic …` field (unless the request sets one) and keep them out of the URL.
/// Like any `Authorization`, the field is dropped when a redirect leaves the origin; credentials in a
/// redirect's `Location` are ignored.
public struct TransferRequest: Sendable {
    /// Method, scheme, authority, path and header fields (swift-http-types).
    public var head: HTTPRequest
    /// The request body, if any.
    public var body: RequestBody?
    /// Where the response body goes.
    public var destination: ResponseDestination
    /// Timeouts, redirects, protocol, TLS, limits.
    public var options: TransferOptions
    /// The `URL` this request was made from, and its string: a response from exactly that URL
    /// reuses it instead of parsing the string again (if `head` changes, the strings differ).
    private var madeFrom: (string: String, url: URL)?

    /// Creates a request from an `HTTPRequest`.
    public init(
        _ head: HTTPRequest,
        body: RequestBody? = nil,
        destination: ResponseDestination = .memory,
        options: TransferOptions = TransferOptions()
    ) {
        self.head = head
        self.body = body
        self.destination = destination
        self.options = options
    }

    /// Creates a request for a URL.
    ///
    /// A URL with credentials (`http://user:password@host/`) gets an `Authorization: Basic` field
    /// unless `headerFields` has an `Authorization` of its own (see above). A URL that is not absolute
    /// (no scheme) makes a request that fails with ``TransferError/Code/badURL`` when it starts.
    public init(
        url: URL,
        method: HTTPRequest.Method = .get,
        headerFields: HTTPFields = [:],
        body: RequestBody? = nil,
        destination: ResponseDestination = .memory,
        options: TransferOptions = TransferOptions()
    ) {
        guard url.scheme != nil else {
            // HTTPRequest(url:) traps on a URL without a scheme.
            var head = HTTPRequest(method: method, scheme: nil, authority: nil, path: "/")
            head.headerFields = headerFields
            self.init(head, body: body, destination: destination, options: options)
            return
        }
        var fields = headerFields
        if let user = url.user(percentEncoded: false) {
            Self.addBasicAuthorization(user: user, password: url.password(percentEncoded: false) ?? "", to: &fields)
        }
        self.init(HTTPRequest(method: method, url: url, headerFields: fields),
                  body: body, destination: destination, options: options)
        if url.user == nil { self.madeFrom = (url.absoluteString, url) }
    }

    /// Creates a request from untrusted strings, rejecting what could smuggle bytes onto the wire.
    ///
    /// - Throws: ``TransferError`` with ``TransferError/Code/badURL`` for a URL with spaces or
    ///   control characters or without a host, ``TransferError/Code/unsupportedURL`` for a scheme
    ///   other than `http`/`https`, and ``TransferError/Code/invalidRequest`` for an invalid
    ///   method or header name, or a header value containing CR, LF or NUL.
    public init(
        method: String,
        url: String,
        headers: [(name: String, value: String)] = [],
        body: RequestBody? = nil,
        destination: ResponseDestination = .memory,
        options: TransferOptions = TransferOptions()
    ) throws(TransferError) {
        guard let parsedMethod = HTTPRequest.Method(method) else {
            throw TransferError(.invalidRequest, "Invalid HTTP method \"\(method)\".")
        }
        let target = try RequestTarget(validating: url)
        var fields = HTTPFields()
        for header in headers {
            do {
                fields.append(try Self.validatedField(header.name, value: header.value))
            } catch {
                var invalid = error
                invalid.failingURL = target.url
                throw invalid
            }
        }
        if let credentials = target.credentials {
            Self.addBasicAuthorization(user: credentials.user, password: credentials.password, to: &fields)
        }
        var head = HTTPRequest(method: parsedMethod, scheme: target.scheme, authority: target.authority, path: target.path)
        head.headerFields = fields
        self.init(head, body: body, destination: destination, options: options)
    }

    /// Sets a header field from untrusted strings, replacing any field of that name.
    ///
    /// Unlike assigning through ``head``'s `headerFields` (where swift-http-types turns CR, LF and NUL
    /// into spaces), this refuses such a value.
    ///
    /// - Parameters:
    ///   - name: The field name (a token).
    ///   - value: The value; no CR, LF or NUL.
    /// - Throws: ``TransferError`` with ``TransferError/Code/invalidRequest`` for an invalid name, or a
    ///   value containing CR, LF or NUL.
    public mutating func setHeaderField(_ name: String, value: String) throws(TransferError) {
        let field = try Self.validatedField(name, value: value)
        self.head.headerFields[field.name] = field.value
    }

    private static func validatedField(_ name: String, value: String) throws(TransferError) -> HTTPField {
        guard let fieldName = HTTPField.Name(name) else {
            throw TransferError(.invalidRequest, "Invalid header name \"\(name)\".")
        }
        guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
            throw TransferError(.invalidRequest, "The value of header \(name) contains CR, LF or NUL.")
        }
        return HTTPField(name: fieldName, value: value)
    }

    /// Adds `Authorization: Basic base64(user:password)` (RFC 7617, UTF-8) unless `fields` has an
    /// `Authorization` already.
    private static func addBasicAuthorization(user: String, password: String, to fields: inout HTTPFields) {
        guard fields[.authorization] == nil else { return }
        fields[.authorization] = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// The request's URL, when its head has a scheme and authority.
    public var url: URL? { self.head.url }

    /// The `URL` for `target`, without parsing when it is the one this request was made from.
    func url(for target: RequestTarget) -> URL? {
        if let madeFrom = self.madeFrom, madeFrom.string == target.string { return madeFrom.url }
        return target.url
    }
}

/// A validated absolute `http`/`https` URL, split the way `HTTPRequest` stores it.
struct RequestTarget: Hashable {
    let scheme: String
    let authority: String
    let path: String
    /// The full URL string handed to curl.
    let string: String
    /// The user name and password of a URL string with credentials (percent-decoded); never part of
    /// ``string``.
    var credentials: (user: String, password: String)? {
        self.userInfo.map { ($0.user, $0.password) }
    }
    private var userInfo: UserInfo?

    private struct UserInfo: Hashable {
        var user: String
        var password: String
    }

    var url: URL? { URL(string: self.string) }

    /// Validates a URL string: `http`/`https`, a host, no whitespace or control characters.
    init(validating string: String) throws(TransferError) {
        guard !string.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw TransferError(.badURL, "The URL contains whitespace or control characters.")
        }
        guard let components = URLComponents(string: string), let scheme = components.scheme?.lowercased() else {
            throw TransferError(.badURL, "\"\(string)\" is not an absolute URL.")
        }
        guard scheme == "http" || scheme == "https" else {
            throw TransferError(.unsupportedURL, "Only http and https URLs are supported, not \"\(scheme)\".",
                                failingURL: URL(string: string))
        }
        guard let host = components.percentEncodedHost, !host.isEmpty else {
            throw TransferError(.badURL, "\"\(string)\" has no host.", failingURL: URL(string: string))
        }
        var authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port {
            guard (1...65535).contains(port) else {
                throw TransferError(.badURL, "\"\(string)\" has port \(port), outside 1...65535.", failingURL: URL(string: string))
            }
            authority += ":\(port)"
        }
        if let user = components.user {
            self.userInfo = UserInfo(user: user, password: components.password ?? "")
        }
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?\(query)" }
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.string = "\(scheme)://\(authority)\(path)"
    }

    /// Validates the pseudo-header fields of an `HTTPRequest`, which already holds the URL split.
    ///
    /// This runs for every transfer, so it checks bytes instead of re-parsing a URL: `http` or
    /// `https`; an authority with no whitespace, control characters or URL delimiters; a path that
    /// starts with `/` and has no whitespace, control characters or fragment.
    init(validating head: HTTPRequest) throws(TransferError) {
        guard let rawScheme = head.scheme, !rawScheme.isEmpty else {
            throw TransferError(.badURL, "The request has no scheme.")
        }
        let scheme = rawScheme == "http" || rawScheme == "https" ? rawScheme : rawScheme.lowercased()
        // Built only for an error: this runs for every transfer.
        func failingURL() -> URL? { URL(string: "\(scheme)://\(head.authority ?? "")\(head.path ?? "")") }
        guard scheme == "http" || scheme == "https" else {
            throw TransferError(.unsupportedURL, "Only http and https URLs are supported, not \"\(scheme)\".",
                                failingURL: failingURL())
        }
        guard let authority = head.authority, !authority.isEmpty,
              !Self.containsByte(authority, where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/")
                  || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "\\") }) else {
            throw TransferError(.badURL, "The request has no valid authority (host).", failingURL: failingURL())
        }
        guard !Self.containsByte(authority, where: { $0 == UInt8(ascii: "@") }) else {
            throw TransferError(.badURL, "The request's authority holds credentials; make the request from a URL "
                                + "(they become an Authorization field) or set Authorization yourself.",
                                failingURL: failingURL())
        }
        guard Self.hasValidPort(authority) else {
            throw TransferError(.badURL, "The request's authority \"\(authority)\" is not host[:port] with a port in 1...65535.",
                                failingURL: failingURL())
        }
        let path = (head.path?.isEmpty ?? true) ? "/" : (head.path ?? "/")
        guard path.utf8.first == UInt8(ascii: "/"),
              !Self.containsByte(path, where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "#") }) else {
            throw TransferError(.badURL, "The request path \"\(path)\" is not a valid origin-form path.",
                                failingURL: failingURL())
        }
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.string = Self.joined(scheme, authority, path)
    }

    /// `scheme://authority` and `path` as one string, written into its storage at once: appending
    /// the parts one by one cost four times as much, on every transfer.
    private static func joined(_ scheme: String, _ authority: String, _ path: String) -> String {
        let count = scheme.utf8.count + 3 + authority.utf8.count + path.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            var written = Self.write(scheme, into: buffer, at: 0)
            written = Self.write("://", into: buffer, at: written)
            written = Self.write(authority, into: buffer, at: written)
            return Self.write(path, into: buffer, at: written)
        }
    }

    /// Copies `part`'s UTF-8 into `buffer` at `offset`; returns the offset after it.
    private static func write(_ part: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        var part = part
        return part.withUTF8 { bytes in
            _ = UnsafeMutableBufferPointer(rebasing: buffer[offset...]).initialize(fromContentsOf: bytes)
            return offset + bytes.count
        }
    }

    /// Whether some UTF-8 byte of `string` satisfies `predicate`, scanning its contiguous storage
    /// directly when it has one (native strings do).
    private static func containsByte(_ string: String, where predicate: (UInt8) -> Bool) -> Bool {
        string.utf8.withContiguousStorageIfAvailable { $0.contains(where: predicate) } ?? string.utf8.contains(where: predicate)
    }

    /// Whether `authority` (`host`, `host:port`, `[v6]`, `[v6]:port`) has no port, an empty one, or
    /// one of 1...65535 in decimal digits. A byte scan, like the checks above.
    private static func hasValidPort(_ authority: String) -> Bool {
        authority.utf8.withContiguousStorageIfAvailable { Self.hasValidPort(bytes: $0) }
            ?? Self.hasValidPort(bytes: Array(authority.utf8))
    }

    private static func hasValidPort<Bytes: RandomAccessCollection<UInt8>>(bytes: Bytes) -> Bool where Bytes.Index == Int {
        let colon: Int
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let afterHost = close + 1
            guard afterHost != bytes.endIndex else { return true }
            guard bytes[afterHost] == UInt8(ascii: ":") else { return false }
            colon = afterHost
        } else {
            guard let first = bytes.firstIndex(of: UInt8(ascii: ":")) else { return true }
            colon = first
        }
        var port = 0
        var digits = 0
        for byte in bytes[(colon + 1)...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 5 else { return false }
            port = port * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits == 0 || (1...65535).contains(port)
    }
}

extension TransferRequest {
    /// Whether the request can be sent again from its start: its body is not a stream that curl has
    /// already read (``RequestBodyStream/hasStarted``).
    public var canBeSentAgain: Bool {
        guard case .stream(let stream) = self.body else { return true }
        return !stream.hasStarted
    }
}
