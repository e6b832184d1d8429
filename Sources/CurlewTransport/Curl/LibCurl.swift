internal import CCurl

/// Facts about the libcurl that Curlew runs on (the runtime library, not the headers it was built with).
public enum LibCurl {
    /// The runtime version string, e.g. `"7.88.1"`.
    public static var version: String {
        ensureInitialized()
        return ccurl_runtime_version().map { String(cString: $0) } ?? "unknown"
    }

    /// The runtime version as `0xXXYYZZ` (major, minor, patch).
    public static var versionNumber: UInt32 {
        ensureInitialized()
        return ccurl_runtime_version_num()
    }

    /// Whether this libcurl was built with HTTP/2 support (nghttp2).
    public static var supportsHTTP2: Bool {
        ensureInitialized()
        return ccurl_runtime_features() & Int32(CURL_VERSION_HTTP2) != 0
    }

    /// Whether this libcurl was built with HTTP/3 support (QUIC). Debian 12's is not: without it, an
    /// `Alt-Svc` announcement of `h3` is ignored (see ``TransferOptions/altSvcFile``).
    public static var supportsHTTP3: Bool {
        ensureInitialized()
        return ccurl_runtime_features() & Int32(CURL_VERSION_HTTP3) != 0
    }

    /// Whether this libcurl numbers its connections (`CURLINFO_CONN_ID`, curl 8.2 and later), for
    /// ``TransferMetrics/connectionID``.
    public static let reportsConnectionIDs: Bool = versionNumber >= 0x08_02_00

    /// The protocols an `Alt-Svc` announcement may switch to (`CURLOPT_ALTSVC_CTRL`): HTTP/1.1 and
    /// HTTP/2, and HTTP/3 when this libcurl has it.
    static let altSvcVersions: Int = {
        var versions = Int(CURLALTSVC_H1) | Int(CURLALTSVC_H2)
        if supportsHTTP3 { versions |= Int(CURLALTSVC_H3) }
        return versions
    }()

    /// The `Accept-Encoding` value this libcurl sends for `CURLOPT_ACCEPT_ENCODING ""`: every
    /// encoding it decodes, in its order (`deflate, gzip`, then `br` and `zstd` when built with
    /// them). `nil` without zlib, where curl's list is not derived here.
    static let acceptedEncodings: String? = {
        ensureInitialized()
        let features = ccurl_runtime_features()
        guard features & Int32(CURL_VERSION_LIBZ) != 0 else { return nil }
        var encodings = "deflate, gzip"
        if features & Int32(CURL_VERSION_BROTLI) != 0 { encodings += ", br" }
        if features & Int32(CURL_VERSION_ZSTD) != 0 { encodings += ", zstd" }
        return encodings
    }()

    /// Whether connections made with HTTP/2 prior knowledge (h2c) can be reused.
    ///
    /// libcurl before 8.0 fails every transfer after the first on such a connection with an error in
    /// the HTTP/2 framing layer (curl issue #10634, fixed in 8.0.0). Debian 12 ships 7.88.1.
    public static var supportsPriorKnowledgeReuse: Bool { versionNumber >= 0x08_00_00 }

    /// Runs `curl_global_init` exactly once per process, before any other curl call.
    ///
    /// `curl_global_init` is not thread-safe in libcurl 7.x; a Swift global `let` is initialised
    /// exactly once under a lock, which makes this safe to call from any thread.
    static func ensureInitialized() {
        _ = globalInitialization
    }

    private static let globalInitialization: Bool = {
        curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()
}
