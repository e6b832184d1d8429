import CurlewTransport
import Foundation
import HTTPTypes

/// Where a manager's secrets go — its credentials, its cookie jar, and the header fields
/// `Authorization`, `Proxy-Authorization`, `Cookie` and those a request lists in
/// `TransferOptions.secretHeaderNames` — and what a request to anywhere else is sent without. No I/O.
///
/// With a base URL, secrets go only to requests whose origin (scheme, host, port: see `Origin`) is
/// the base URL's; without one, every URL is given in full by the caller and each request's own
/// origin is where its secrets belong. A redirect is held to the same origin by the transfer itself
/// (`RedirectPlanner`, `Transfer+Credentials.swift`, `Transfer+Cookies.swift`).
struct SecretScope: Sendable, Hashable {
    private enum Bound: Sendable, Hashable {
        /// No base URL: each request's own origin.
        case eachRequest
        /// The base URL's origin; `nil` when the base URL has none (not `http`/`https`): nowhere.
        case baseOrigin(Origin?)
    }

    private let bound: Bound

    /// The scope of a manager with `baseURL`.
    init(baseURL: URL?) {
        self.bound = baseURL.map { .baseOrigin(Origin($0)) } ?? .eachRequest
    }

    /// The base URL's origin, when there is a base URL and it has one.
    var baseOrigin: Origin? {
        if case .baseOrigin(let origin) = self.bound { return origin }
        return nil
    }

    /// Whether a request with `head` may carry the secrets.
    func admits(_ head: HTTPRequest) -> Bool {
        switch self.bound {
        case .eachRequest:
            return true
        case .baseOrigin(let origin):
            return origin != nil && Origin(head) == origin
        }
    }

    /// `request` as it is sent: unchanged when the scope admits it; otherwise without credentials,
    /// cookie jar and secret header fields. `withheld` names what was taken away (`credentials`,
    /// `cookies`, header names), empty when nothing was.
    func binding(_ request: TransferRequest) -> (request: TransferRequest, withheld: [String]) {
        guard !self.admits(request.head) else { return (request, []) }
        var request = request
        var withheld: [String] = []
        if request.options.credentials != nil {
            request.options.credentials = nil
            withheld.append("credentials")
        }
        if request.options.cookieJar != nil {
            request.options.cookieJar = nil
            withheld.append("cookies")
        }
        let secretNames = request.options.secretHeaderNames.union([.authorization, .proxyAuthorization, .cookie])
        let fields = request.head.headerFields
        if fields.contains(where: { secretNames.contains($0.name) }) {
            var kept = HTTPFields()
            for field in fields {
                if !secretNames.contains(field.name) {
                    kept.append(field)
                } else if !withheld.contains(field.name.rawName) {
                    withheld.append(field.name.rawName)
                }
            }
            request.head.headerFields = kept
        }
        return (request, withheld)
    }
}
