import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// Cookies kept in memory and shared by every transfer that uses the jar, through curl's share
/// interface (`curl_share_init` with `CURL_LOCK_DATA_COOKIE`).
///
/// Set it as ``TransferOptions/cookieJar``: curl then stores each response's `Set-Cookie` in the
/// jar (redirect responses included) and sends the matching cookies — by domain, path, `Secure`
/// and expiry, as browsers do; never to another host — with every request that uses the jar.
/// Without a jar (the default) cookies are neither stored nor sent.
///
/// A jar lives in memory; one made with ``init(file:maximumFileSize:)`` starts with the cookies of
/// a cookie file in curl's Netscape format and ``save()`` writes it back there, so it can be shared
/// with the `curl` command (`curl -b file -c file`) and kept across runs.
///
/// ```swift
/// let jar = CookieJar()
/// var request = TransferRequest(url: loginURL, method: .post)
/// request.options.cookieJar = jar
/// _ = try await engine.execute(request)
/// print(jar.cookies.map(\.name))   // ["session"]
/// ```
///
/// **Locking.** curl calls the share's lock functions around every use of the shared cookies.
/// Within one engine they would never contend — all of its transfers run on its one context — but
/// a jar is not tied to one engine: it can serve transfers of several engines, and ``cookies`` and
/// ``removeAll()`` read and change it from the caller's thread while transfers run. So the jar
/// installs real locks: one mutex per kind of shared data curl names. They are held only for the
/// moment curl reads or updates its list.
///
/// Safety: `@unchecked Sendable` because the share handle is only used through curl calls, which
/// take the jar's mutexes (`lockCallback`/`unlockCallback`) around any access to shared data; the
/// pointers themselves are immutable.
public final class CookieJar: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The `CURLSH *`.
    let share: UnsafeMutableRawPointer
    /// One mutex per `curl_lock_data` value.
    private let mutexes: UnsafeMutablePointer<pthread_mutex_t>
    private static let mutexCount = Int(CURL_LOCK_DATA_LAST.rawValue)

    /// The cookie file the jar was loaded from and ``save()`` writes to; `nil` for a jar in memory
    /// only (see ``init(file:maximumFileSize:)``).
    public let file: URL?

    /// Creates an empty jar, in memory.
    public convenience init() {
        self.init(tiedTo: nil)
    }

    /// Creates an empty jar tied to `file` (not read yet).
    init(tiedTo file: URL?) {
        self.file = file
        LibCurl.ensureInitialized()
        guard let share = curl_share_init() else {
            preconditionFailure("curl_share_init failed: out of memory")
        }
        self.share = share
        self.mutexes = .allocate(capacity: Self.mutexCount)
        for index in 0..<Self.mutexCount {
            pthread_mutex_init(self.mutexes + index, nil)
        }
        _ = ccurl_share_setopt_lock_callback(share, Self.lockCallback)
        _ = ccurl_share_setopt_unlock_callback(share, Self.unlockCallback)
        _ = ccurl_share_setopt_ptr(share, CURLSHOPT_USERDATA, UnsafeMutableRawPointer(self.mutexes))
        _ = ccurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
    }

    /// Frees the share. Every transfer that used the jar holds it through its request until it has
    /// let go of its easy handle (a pooled handle leaves the share when it is reset), so nothing
    /// refers to the share any more.
    deinit {
        curl_share_cleanup(self.share)
        for index in 0..<Self.mutexCount {
            pthread_mutex_destroy(self.mutexes + index)
        }
        self.mutexes.deallocate()
    }

    private static let lockCallback: ccurl_lock_callback = { _, data, _, userp in
        guard let userp, Int(data.rawValue) < mutexCount else { return }
        pthread_mutex_lock(userp.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
    }

    private static let unlockCallback: ccurl_unlock_callback = { _, data, userp in
        guard let userp, Int(data.rawValue) < mutexCount else { return }
        pthread_mutex_unlock(userp.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
    }

    // MARK: Reading and clearing

    /// Every cookie in the jar, as curl keeps them (expired ones are dropped when curl next looks).
    public var cookies: [HTTPCookie] {
        self.netscapeLines().compactMap(Self.cookie(fromNetscapeLine:))
    }

    /// The cookies a request to `url` would send: by host (a host-only cookie matches its host
    /// exactly, a domain cookie its domain and subdomains), path prefix and, for `Secure`
    /// cookies, `https`.
    public func cookies(for url: URL) -> [HTTPCookie] {
        guard let host = url.host?.lowercased() else { return [] }
        let path = url.path.isEmpty ? "/" : url.path
        let secure = url.scheme?.lowercased() == "https"
        return self.cookies.filter { cookie in
            let domain = cookie.domain.lowercased()
            let hostMatches = domain.hasPrefix(".")
                ? host == domain.dropFirst() || host.hasSuffix(domain)
                : host == domain
            let pathMatches = path == cookie.path || path.hasPrefix(cookie.path.hasSuffix("/") ? cookie.path : cookie.path + "/")
            return hostMatches && pathMatches && (secure || !cookie.isSecure)
        }
    }

    /// Removes every cookie (`CURLOPT_COOKIELIST` `"ALL"`).
    public func removeAll() {
        guard let easy = EasyHandle() else { return }
        _ = ccurl_easy_setopt_ptr(easy.raw, CURLOPT_SHARE, self.share)
        _ = ccurl_easy_setopt_string(easy.raw, CURLOPT_COOKIELIST, "ALL")
    }

    /// curl's cookie list (`CURLINFO_COOKIELIST`), read through a handle of its own attached to the
    /// share for the moment.
    func netscapeLines() -> [String] {
        guard let easy = EasyHandle() else { return [] }
        _ = ccurl_easy_setopt_ptr(easy.raw, CURLOPT_SHARE, self.share)
        var list: UnsafeMutablePointer<curl_slist>?
        guard ccurl_easy_getinfo_slist(easy.raw, CURLINFO_COOKIELIST, &list) == CURLE_OK else { return [] }
        defer { curl_slist_free_all(list) }
        var lines: [String] = []
        var node = list
        while let current = node {
            if let text = current.pointee.data { lines.append(String(cString: text)) }
            node = current.pointee.next
        }
        return lines
    }

    // MARK: Identity

    /// Whether two values are the same jar: a jar is equal only to itself, whatever cookies it holds.
    public static func == (lhs: CookieJar, rhs: CookieJar) -> Bool {
        lhs === rhs
    }

    /// Hashes the jar's identity, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    /// The number of cookies; never their values.
    public var description: String {
        "<CookieJar: \(self.netscapeLines().count) cookies>"
    }
}
