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
    public init(
        url: URL,
        method: HTTPRequest.Method = .get,
        headerFields: HTTPFields = [:],
        body: RequestBody? = nil,
        destination: ResponseDestination = .memory,
        options: TransferOptions = TransferOptions()
    ) {
        self.init(HTTPRequest(method: method, url: url, headerFields: headerFields),
                  body: body, destination: destination, options: options)
        self.madeFrom = (url.absoluteString, url)
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
            guard let name = HTTPField.Name(header.name) else {
                throw TransferError(.invalidRequest, "Invalid header name \"\(header.name)\".", failingURL: target.url)
            }
            guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                throw TransferError(.invalidRequest, "The value of header \(header.name) contains CR, LF or NUL.",
                                    failingURL: target.url)
            }
            fields.append(HTTPField(name: name, value: header.value))
        }
        var head = HTTPRequest(method: parsedMethod, scheme: target.scheme, authority: target.authority, path: target.path)
        head.headerFields = fields
        self.init(head, body: body, destination: destination, options: options)
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
        if let port = components.port { authority += ":\(port)" }
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
        let path = (head.path?.isEmpty ?? true) ? "/" : (head.path ?? "/")
        guard path.utf8.first == UInt8(ascii: "/"),
              !Self.containsByte(path, where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "#") }) else {
            throw TransferError(.badURL, "The request path \"\(path)\" is not a valid origin-form path.",
                                failingURL: failingURL())
        }
        self.scheme = scheme
        self.authority = authority
        self.path = path
        var string = ""
        string.reserveCapacity(scheme.utf8.count + 3 + authority.utf8.count + path.utf8.count)
        string += scheme
        string += "://"
        string += authority
        string += path
        self.string = string
    }

    /// Whether some UTF-8 byte of `string` satisfies `predicate`, scanning its contiguous storage
    /// directly when it has one (native strings do).
    private static func containsByte(_ string: String, where predicate: (UInt8) -> Bool) -> Bool {
        string.utf8.withContiguousStorageIfAvailable { $0.contains(where: predicate) } ?? string.utf8.contains(where: predicate)
    }
}
