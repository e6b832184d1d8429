import Foundation
internal import CCurl

#if canImport(Glibc)
import Glibc
#endif

extension CookieJar {
    /// The largest cookie file ``init(file:maximumFileSize:)`` reads unless told otherwise: 4 MiB,
    /// a thousand cookies at browsers' 4 KiB limit each, four times over.
    public static let defaultMaximumFileSize = 4 << 20

    /// Creates a jar holding the cookies of `file`, a cookie file in curl's Netscape format (what
    /// `curl -c` writes and `curl -b` reads), and tied to it: ``save()`` writes the jar back there.
    ///
    /// A missing file makes an empty jar (``save()`` creates the file). Each line is read by curl's
    /// own cookie parser, as `curl -b` reads it: comments and lines curl does not understand are
    /// skipped, expired cookies are dropped, session cookies (expiry `0`) are kept.
    ///
    /// ```swift
    /// let jar = try CookieJar(file: URL(filePath: "cookies.txt"))
    /// var request = TransferRequest(url: url)
    /// request.options.cookieJar = jar
    /// _ = try await engine.execute(request)
    /// try jar.save()   // cookies.txt now holds the cookies curl can send: `curl -b cookies.txt …`
    /// ```
    ///
    /// - Parameters:
    ///   - file: A `file:` URL.
    ///   - maximumFileSize: The largest file read, in bytes (``defaultMaximumFileSize`` by default):
    ///     the whole file is held in memory while it is read.
    /// - Throws: ``TransferError`` with ``TransferError/Code/cannotOpenFile`` when the file exists
    ///   but cannot be read, or is larger than `maximumFileSize`.
    public convenience init(file: URL, maximumFileSize: Int = CookieJar.defaultMaximumFileSize) throws(TransferError) {
        self.init(tiedTo: file)
        guard let contents = try Self.readFile(file.path, limit: maximumFileSize) else { return }
        guard let easy = EasyHandle() else {
            throw TransferError(.unknown, "curl_easy_init failed.")
        }
        _ = ccurl_easy_setopt_ptr(easy.raw, CURLOPT_SHARE, self.share)
        let now = Date()
        for line in contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            var line = line
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard !line.isEmpty, !line.contains(0),
                  line.first != UInt8(ascii: "#") || line.starts(with: "#HttpOnly_".utf8) else { continue }
            let text = String(decoding: line, as: UTF8.self)
            guard !Self.hasExpired(netscapeLine: text, at: now) else { continue }
            // `CURLOPT_COOKIELIST` with a Netscape line (or a `Set-Cookie:` line) adds that cookie,
            // parsed exactly as curl parses a cookie file.
            _ = text.withCString { ccurl_easy_setopt_string(easy.raw, CURLOPT_COOKIELIST, $0) }
        }
    }

    /// Writes the jar to its ``file``; see ``save(to:)``.
    ///
    /// - Throws: ``TransferError`` with ``TransferError/Code/cannotWriteToFile`` when the jar has no
    ///   file (it was made with ``init()``) or the file cannot be written.
    public func save() throws(TransferError) {
        guard let file = self.file else {
            throw TransferError(.cannotWriteToFile, "The cookie jar has no file; use save(to:).")
        }
        try self.save(to: file)
    }

    /// Writes every unexpired cookie of the jar — session cookies included, as `curl -c` does — to `file` in
    /// curl's Netscape format, readable by `curl -b file` and by ``init(file:maximumFileSize:)``.
    ///
    /// The file is replaced atomically (a temporary file beside it is written, flushed to disk and
    /// renamed over it): a reader sees the old jar or the new one, never half of one. Cookies are
    /// credentials, so the file is readable and writable by its owner only (mode `0600`).
    ///
    /// - Parameter file: A `file:` URL in an existing, writable directory.
    /// - Throws: ``TransferError`` with ``TransferError/Code/cannotWriteToFile`` when the file
    ///   cannot be written; the previous file, if any, is then untouched.
    public func save(to file: URL) throws(TransferError) {
        var text = "# Netscape HTTP Cookie File\n# https://curl.se/docs/http-cookies.html\n# Written by Curlew.\n\n"
        let now = Date()
        for line in self.netscapeLines() where !Self.hasExpired(netscapeLine: line, at: now) {
            text += line
            text += "\n"
        }
        try Self.replaceAtomically(file.path, with: Array(text.utf8))
    }

    /// Whether a Netscape cookie line has an expiry (its fifth field) that is past at `now`; `0`
    /// is a session cookie, which never expires here. curl drops such cookies when it reads or
    /// writes a file, but keeps those added one by one until it next sends cookies.
    static func hasExpired(netscapeLine line: String, at now: Date) -> Bool {
        let fields = line.split(separator: "\t", maxSplits: 6, omittingEmptySubsequences: false)
        guard fields.count == 7, let expiry = Int64(fields[4]), expiry > 0 else { return false }
        return Double(expiry) <= now.timeIntervalSince1970
    }

    /// The contents of the file at `path`, or `nil` when there is no such file.
    private static func readFile(_ path: String, limit: Int) throws(TransferError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw TransferError(.cannotOpenFile, "Cannot read the cookie file \(path): \(ResponseBodySink.lastError())")
        }
        defer { close(descriptor) }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw TransferError(.cannotOpenFile, "Cannot read the cookie file \(path): \(ResponseBodySink.lastError())")
            }
            if count == 0 { return contents }
            guard contents.count + count <= limit else {
                throw TransferError(.cannotOpenFile, "The cookie file \(path) is larger than the limit of \(limit) bytes "
                                    + "(maximumFileSize).")
            }
            contents.append(contentsOf: buffer[..<count])
        }
    }

    /// Writes `bytes` to a new file beside `path` with mode 0600, flushes it and renames it over `path`.
    private static func replaceAtomically(_ path: String, with bytes: [UInt8]) throws(TransferError) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporaryPath = (directory.isEmpty ? "." : directory)
            + "/.\(url.lastPathComponent).curlew-\(UInt32.random(in: .min ... .max)).tmp"
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw TransferError(.cannotWriteToFile, "Cannot create \(temporaryPath): \(ResponseBodySink.lastError())")
        }
        var failure: String?
        // The creation mode passes through the umask, which can only remove bits; set it exactly.
        if fchmod(descriptor, 0o600) != 0 { failure = ResponseBodySink.lastError() }
        var offset = 0
        while failure == nil, offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = ResponseBodySink.lastError()
            } else {
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = ResponseBodySink.lastError() }
        if close(descriptor) != 0, failure == nil { failure = ResponseBodySink.lastError() }
        if failure == nil, rename(temporaryPath, path) != 0 { failure = ResponseBodySink.lastError() }
        if let failure {
            unlink(temporaryPath)
            throw TransferError(.cannotWriteToFile, "Cannot write the cookie file \(path): \(failure)")
        }
    }
}
