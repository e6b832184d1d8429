import CurlewTransport
import Foundation

/// Where an OpenAPI operation's request goes: the client's server URL followed by the operation's
/// path and query, both already percent-encoded by the generated code.
///
/// The server URL's path is kept and the operation's path appended to it, as text
/// (`https://example.com/api` + `/users/7?page=2` is `https://example.com/api/users/7?page=2`): a path
/// that starts with `//` stays a path on the server's host. A trailing `/` of the server URL is
/// dropped first so that the two do not make `//`, and the operation's query replaces any query of
/// the server URL, as the runtime's other transports do. Characters a URL cannot hold (a space)
/// are percent-encoded by Foundation, never sent raw.
enum OperationURL {
    /// The absolute URL for `path` (the `HTTPRequest`'s path with its query) on `base`.
    ///
    /// - Throws: `TransferError/Code/badURL` when `base` has no scheme or host, or the two make no URL.
    static func url(base: URL, path: String?) throws(TransferError) -> URL {
        let operationPath = path ?? ""
        guard var server = URLComponents(url: base, resolvingAgainstBaseURL: true), server.scheme != nil,
              let host = server.host, !host.isEmpty else {
            throw TransferError(.badURL, "The server URL \"\(base.absoluteString)\" has no scheme or host.")
        }
        server.query = nil
        server.fragment = nil
        if server.percentEncodedPath.hasSuffix("/") { server.percentEncodedPath.removeLast() }
        let separator = operationPath.isEmpty || operationPath.hasPrefix("/") || operationPath.hasPrefix("?") ? "" : "/"
        guard let prefix = server.string, let url = URL(string: prefix + separator + operationPath),
              url.host == server.host, url.port == server.port else {
            throw TransferError(.badURL, "\"\(operationPath)\" on the server URL \"\(base.absoluteString)\" makes no URL.")
        }
        return url
    }
}
