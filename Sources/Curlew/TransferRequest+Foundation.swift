import CurlewTransport
import Foundation
import HTTPTypes
import HTTPTypesFoundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransferRequest {
    /// A request from a Foundation `URLRequest`: method, URL, header fields, body and timeout, for
    /// code arriving from URLSession, AFNetworking or Alamofire.
    ///
    /// ```swift
    /// var urlRequest = URLRequest(url: url)
    /// urlRequest.httpMethod = "POST"
    /// urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
    /// urlRequest.httpBody = body
    /// let response = try await engine.execute(TransferRequest(urlRequest))
    /// ```
    ///
    /// `timeoutInterval` means what it means to URLSession: the longest wait for the connection or
    /// for the next bytes, so it becomes both `TransferOptions/connectTimeout` and
    /// `TransferOptions/idleTimeout`. Cache policy, cookie and cellular settings have no
    /// counterpart and are ignored.
    ///
    /// - Parameter urlRequest: The request.
    /// - Throws: `TransferError` with `TransferError/Code/badURL` when it has no absolute
    ///   `http`/`https` URL with a host, `TransferError/Code/unsupportedURL` for another scheme,
    ///   and `TransferError/Code/invalidRequest` for a body stream (it cannot be rewound for a
    ///   redirect or a retried connection: read it into `httpBody` or a file) or a header field
    ///   swift-http-types cannot hold.
    public init(_ urlRequest: URLRequest) throws(TransferError) {
        guard let url = urlRequest.url?.absoluteURL else {
            throw TransferError(.badURL, "The URLRequest has no URL.")
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw TransferError(.unsupportedURL, "Only http and https URLs are supported.", failingURL: url)
        }
        guard url.host?.isEmpty == false else {
            throw TransferError(.badURL, "\(url.absoluteString) has no host.", failingURL: url)
        }
        guard urlRequest.httpBodyStream == nil else {
            throw TransferError(.invalidRequest, "A body stream cannot be sent again when a redirect or a retried connection needs it; "
                                + "use httpBody or a file.", failingURL: url)
        }
        guard let head = urlRequest.httpRequest else {
            throw TransferError(.invalidRequest, "The URLRequest's method or header fields are not valid HTTP.", failingURL: url)
        }
        var options = TransferOptions()
        if urlRequest.timeoutInterval > 0, urlRequest.timeoutInterval.isFinite {
            let timeout = Duration.milliseconds(Int64(min(urlRequest.timeoutInterval, 86_400 * 365) * 1000))
            options.connectTimeout = timeout
            options.idleTimeout = timeout
        }
        self.init(head, body: urlRequest.httpBody.map(RequestBody.data), options: options)
    }
}

extension HTTPURLResponse {
    /// A Foundation `HTTPURLResponse` for a transfer's response: its URL, status and header fields
    /// (for code that inspects responses the URLSession way). `nil` only if Foundation refuses the
    /// values.
    ///
    /// - Parameter response: The transfer's response.
    public convenience init?(_ response: TransferResponse) {
        self.init(httpResponse: response.head, url: response.url)
    }
}
