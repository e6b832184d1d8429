import CurlewOperations
import CurlewTransport
import Foundation
import HTTPTypes

extension TransferRequest {
    /// A `curl` command line that sends this request, with secrets redacted: the values of
    /// `Authorization`, `Proxy-Authorization`, `Cookie` and the headers named in
    /// `TransferOptions/secretHeaderNames`, passwords (the proxy's too).
    ///
    /// ```swift
    /// print(try api.request(.post, "users", parameters: ["name": "Ada"]).curlDescription)
    /// // curl 'https://api.example.com/v1/users' \
    /// //   -H 'Content-Type: application/x-www-form-urlencoded' \
    /// //   -H 'Accept-Language: en;q=1' \
    /// //   -H 'User-Agent: Curlew/0.1.0 (Linux 6.1.0)' \
    /// //   -H 'Expect:' \
    /// //   --data-raw 'name=Ada' \
    /// //   --compressed
    /// ```
    ///
    /// See ``curlDescription(revealingSecrets:)``.
    public var curlDescription: String {
        self.curlDescription(revealingSecrets: false)
    }

    /// A `curl` command line that sends this request: method, URL, header fields, body, TLS
    /// (`--cacert`, `--pinnedpubkey`, `--cert`/`--key`, `--insecure`), credentials, timeouts,
    /// redirects, proxy (with its credentials, bypass list and TLS options), Unix socket, connect-to
    /// rules and DNS overrides (both `--connect-to`), IP version, HSTS and Alt-Svc files, HTTP
    /// version and decompression. Run by a POSIX shell, it sends what
    /// Curlew sends (the same libcurl sets the same defaults).
    ///
    /// A body from memory that is UTF-8 text is written inline (`--data-raw`); a file body is
    /// `--data-binary @file`; any other body (binary bytes, a multipart form of memory pieces and
    /// file regions) is `--data-binary @-`, to be piped in, and a note after the command says so.
    /// Notes after the command (lines starting with `#`) also name what curl's command line cannot
    /// say (a cookie jar, verification without the host name check).
    ///
    /// - Parameter revealingSecrets: Whether to write credentials and cookies as they are (for a
    ///   command to run); `false` writes `<redacted>` instead (for logs).
    /// - Returns: The command, its arguments on separate lines joined by ` \`, then any notes.
    public func curlDescription(revealingSecrets: Bool) -> String {
        var arguments: [String] = []
        var notes: [String] = []
        let options = self.options
        func secret(_ value: String) -> String { revealingSecrets ? value : "<redacted>" }

        let method = self.head.method
        switch method {
        case .head:
            arguments.append("--head")
        case .get where self.body == nil:
            break
        case .post where self.body != nil:
            break
        default:
            arguments.append("-X \(method.rawValue)")
        }
        arguments.append(Self.quoted(self.url?.absoluteString ?? "\(self.head.scheme ?? "http")://\(self.head.authority ?? "")\(self.head.path ?? "/")"))

        let hidden = options.secretHeaderNames.union([.authorization, .proxyAuthorization, .cookie])
        for field in self.head.headerFields where field.name != .contentLength && field.name != .transferEncoding {
            let value = hidden.contains(field.name) ? secret(field.value) : field.value
            arguments.append("-H " + Self.quoted(value.isEmpty ? "\(field.name.rawName);" : "\(field.name.rawName): \(value)"))
        }
        let carriesBody = self.body != nil || method == .post || method == .put || method == .patch
        if carriesBody && method != .head && method != .get {
            // As the engine: no form content type of curl's, no 100-continue wait.
            if self.head.headerFields[.contentType] == nil { arguments.append("-H 'Content-Type:'") }
            if self.head.headerFields[.expect] == nil { arguments.append("-H 'Expect:'") }
            switch self.body {
            case nil:
                arguments.append("--data-binary ''")
            case .data(let data)?:
                if !data.contains(0), let text = String(data: data, encoding: .utf8) {
                    arguments.append("--data-raw " + Self.quoted(text))
                } else {
                    arguments.append("--data-binary @-")
                    notes.append("# the body, \(data.count) bytes of binary data, is read from standard input")
                }
            case .file(let url)?:
                arguments.append("--data-binary @" + Self.quoted(url.path))
            case .parts(let parts)?:
                arguments.append("--data-binary @-")
                let length = parts.reduce(0) { $0 + $1.length }
                notes.append("# the body, \(length) bytes in parts from memory and files, is read from standard input")
            case .stream(let stream)?:
                arguments.append("--data-binary @-")
                let length = stream.length.map { "\($0) bytes" } ?? "of unknown length"
                notes.append("# the body, a stream \(length), is read from standard input")
            }
        }

        if options.automaticDecompression && self.head.headerFields[.acceptEncoding] == nil {
            arguments.append("--compressed")
        }
        switch options.httpVersion {
        case .http1_1: arguments.append("--http1.1")
        case .automatic: break
        case .http2PriorKnowledge: arguments.append("--http2-prior-knowledge")
        }
        switch options.redirects {
        case .none: break
        case .follow(let maximum): arguments.append("--location --max-redirs \(maximum)")
        }
        if let timeout = options.connectTimeout { arguments.append("--connect-timeout \(Self.seconds(timeout))") }
        if let timeout = options.timeout { arguments.append("--max-time \(Self.seconds(timeout))") }
        if let idle = options.idleTimeout {
            let (seconds, attoseconds) = idle.components
            arguments.append("--speed-limit 1 --speed-time \(max(1, seconds + (attoseconds > 0 ? 1 : 0)))")
        }
        if let limit = options.maximumResponseBodySize { arguments.append("--max-filesize \(limit)") }
        if let rate = options.maximumDownloadBytesPerSecond ?? options.maximumUploadBytesPerSecond {
            arguments.append("--limit-rate \(rate)")
            if options.maximumDownloadBytesPerSecond != nil, options.maximumUploadBytesPerSecond != nil,
               options.maximumDownloadBytesPerSecond != options.maximumUploadBytesPerSecond {
                notes.append("# --limit-rate applies one rate both ways; Curlew limits sending to \(options.maximumUploadBytesPerSecond ?? 0) bytes/s")
            }
        }
        switch options.proxy {
        case .environment: break
        case .none: arguments.append("--noproxy '*'")
        case .url(let proxy): Self.describe(ProxyServer(parsing: proxy), secret: secret, into: &arguments, notes: &notes)
        case .server(let server):
            var parsed = ProxyServer(parsing: server.url)
            parsed.credentials = server.credentials ?? parsed.credentials
            parsed.bypass = server.bypass
            parsed.tls = server.tls
            Self.describe(parsed, secret: secret, into: &arguments, notes: &notes)
        }
        Self.describeRoute(options, into: &arguments)

        let tls = options.tls
        switch tls.verification {
        case .full: break
        case .noHostnameVerification: notes.append("# the host name is not verified (curl's command line has no such flag)")
        case .none: arguments.append("--insecure")
        }
        if let roots = tls.trustedRootsFile { arguments.append("--cacert " + Self.quoted(roots)) }
        if !tls.pinnedPublicKeys.isEmpty {
            arguments.append("--pinnedpubkey " + Self.quoted(tls.pinnedPublicKeys.map(\.description).joined(separator: ";")))
        }
        if let identity = tls.clientCertificate {
            arguments.append("--cert " + Self.quoted(identity.certificateFile))
            if let key = identity.privateKeyFile { arguments.append("--key " + Self.quoted(key)) }
            if let password = identity.privateKeyPassword { arguments.append("--pass " + Self.quoted(secret(password))) }
        }
        if let credentials = options.credentials {
            arguments.append("--user " + Self.quoted("\(credentials.user):\(secret(credentials.password))"))
            switch credentials.schemes {
            case .basic: arguments.append("--basic")
            case .digest: arguments.append("--digest")
            default: arguments.append("--anyauth")
            }
        }
        if options.cookieJar != nil {
            notes.append("# cookies come from a cookie jar: add them with --cookie 'name=value'")
        }
        if case .file(let destination) = self.destination {
            arguments.append("--output " + Self.quoted(destination.path))
        }

        let command = (["curl " + (arguments.first ?? "")] + arguments.dropFirst()).joined(separator: " \\\n  ")
        return ([command] + notes).joined(separator: "\n")
    }

    /// curl's arguments for `proxy`, whose URL holds no credentials: its password is a secret.
    private static func describe(_ proxy: ProxyServer, secret: (String) -> String,
                                 into arguments: inout [String], notes: inout [String]) {
        arguments.append("--proxy " + Self.quoted(proxy.url))
        if let credentials = proxy.credentials {
            arguments.append("--proxy-user " + Self.quoted("\(credentials.user):\(secret(credentials.password))"))
            switch credentials.schemes {
            case .basic: arguments.append("--proxy-basic")
            case .digest: arguments.append("--proxy-digest")
            default: arguments.append("--proxy-anyauth")
            }
        }
        if !proxy.bypass.isEmpty { arguments.append("--noproxy " + Self.quoted(proxy.bypass.joined(separator: ","))) }
        switch proxy.tls.verification {
        case .full: break
        case .noHostnameVerification: notes.append("# the proxy's host name is not verified (curl's command line has no such flag)")
        case .none: arguments.append("--proxy-insecure")
        }
        if let roots = proxy.tls.trustedRootsFile { arguments.append("--proxy-cacert " + Self.quoted(roots)) }
    }

    /// curl's arguments for where the connections go: a Unix socket, connect-to rules and address
    /// overrides, the IP version, the happy-eyeballs delay, HSTS and Alt-Svc files.
    private static func describeRoute(_ options: TransferOptions, into arguments: inout [String]) {
        switch options.unixSocket {
        case .path(let path)?: arguments.append("--unix-socket " + Self.quoted(path))
        case .abstract(let name)?: arguments.append("--abstract-unix-socket " + Self.quoted(name))
        case nil: break
        }
        func host(_ name: String?) -> String {
            guard let name else { return "" }
            return name.contains(":") && !name.hasPrefix("[") ? "[\(name)]" : name
        }
        for rule in options.connectTo {
            let line = "\(host(rule.host)):\(rule.port.map(String.init) ?? ""):\(host(rule.connectHost)):\(rule.connectPort.map(String.init) ?? "")"
            arguments.append("--connect-to " + Self.quoted(line))
        }
        for (name, address) in options.dnsOverride.sorted(by: { $0.key < $1.key }) {
            arguments.append("--connect-to " + Self.quoted("\(name)::\(host(address)):"))
        }
        switch options.ipVersion {
        case .any: break
        case .ipv4Only: arguments.append("--ipv4")
        case .ipv6Only: arguments.append("--ipv6")
        }
        if let delay = options.happyEyeballsDelay {
            let (seconds, attoseconds) = delay.components
            arguments.append("--happy-eyeballs-timeout-ms \(seconds * 1000 + attoseconds / 1_000_000_000_000_000)")
        }
        if let file = options.hstsFile { arguments.append("--hsts " + Self.quoted(file)) }
        if let file = options.altSvcFile { arguments.append("--alt-svc " + Self.quoted(file)) }
    }

    /// `text` as one POSIX shell word: in single quotes, each `'` written `'\''`.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Seconds as curl's options take them: `30`, `0.5`.
    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return String(seconds) }
        var fraction = String(milliseconds)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction)"
    }
}

extension RequestOperation {
    /// The operation's request as a `curl` command line, secrets redacted (see
    /// `TransferRequest.curlDescription(revealingSecrets:)`).
    public var curlDescription: String {
        self.request.curlDescription
    }
}
