import Foundation
import HTTPTypes

/// Decides the next attempt after a redirect response, as browsers and URLSession do. No I/O.
enum RedirectPlanner {
    /// The statuses Curlew follows.
    static func isRedirect(_ status: Int) -> Bool {
        status == 301 || status == 302 || status == 303 || status == 307 || status == 308
    }

    /// The attempt that follows `attempt` after a `status` redirect to `location` (an absolute URL).
    ///
    /// - POST becomes GET on 301 and 302; every method but HEAD becomes GET on 303; 307 and 308
    ///   keep the method and the body. A request that becomes GET drops its body and the headers
    ///   describing it.
    /// - Credentials (`Authorization`, `Cookie`, `Proxy-Authorization`) and the fields named in
    ///   `secretHeaderNames` are dropped when the origin (scheme, host, port) changes.
    /// - Throws: ``TransferError/Code/unsupportedURL`` for any scheme but `http`/`https`,
    ///   ``TransferError/Code/badURL`` for a target curl and Foundation cannot parse.
    static func next(
        after attempt: Attempt, status: Int, location: String, secretHeaderNames: Set<HTTPField.Name>
    ) throws(TransferError) -> Attempt {
        let target: RequestTarget
        do {
            target = try RequestTarget(validating: location)
        } catch {
            var refusal = error
            refusal.message = "Refused redirect to \"\(location)\": \(error.message)"
            refusal.failingURL = URL(string: location)
            throw refusal
        }
        var next = attempt
        next.target = target
        next.redirectCount += 1
        next.resume = nil

        let becomesGet = (status == 303 && attempt.method != .head)
            || ((status == 301 || status == 302) && attempt.method == .post)
        if becomesGet {
            next.method = .get
            next.sendsBody = false
            for name in [HTTPField.Name.contentType, .contentLength, .contentEncoding, .contentLanguage, .contentLocation] {
                next.headerFields[name] = nil
            }
        }
        if Self.origin(of: target) != Self.origin(of: attempt.target) {
            next.headerFields[.authorization] = nil
            next.headerFields[.cookie] = nil
            next.headerFields[.proxyAuthorization] = nil
            for name in secretHeaderNames {
                next.headerFields[name] = nil
            }
        }
        return next
    }

    /// Scheme, host and port (see ``Origin``): what "the same origin" compares.
    static func origin(of target: RequestTarget) -> Origin {
        Origin(target)
    }
}
