internal import CCurl

/// One libcurl easy handle (`CURL *`), with typed option setters.
///
/// Easy handles are pooled by the engine and reused across transfers, which keeps their internal
/// buffers and avoids an allocation storm per request: a handle keeps its options while the next
/// transfer's ``HandleSetup`` is the same, and is reset (`curl_easy_reset`) otherwise.
/// An easy handle is used on its engine's context only.
final class EasyHandle {
    /// The curl handle; replaced by ``reset()`` for a handle that ``keepsCacheFiles``.
    private(set) var raw: UnsafeMutableRawPointer
    /// The setup whose options the handle holds, when it may be kept; `nil` for a fresh or reset
    /// handle, and while a transfer whose setup is not reusable has it.
    var setup: HandleSetup?
    /// The multi handle the handle is in, by index, and the host its transfer holds a slot for
    /// (kept only while the engine has more than one multi handle); `nil` while it is in none.
    var placement: (index: Int, host: ConnectionAdmission.Host?)?
    /// Whether curl finished the handle's last transfer without an error (its connection is then
    /// probably kept for reuse in that multi handle).
    var finishedCleanly = false
    /// Whether curl keeps HSTS or Alt-Svc caches in the handle (``ConnectionRoute``): they survive
    /// `curl_easy_reset`, so ``reset()`` replaces the handle, and curl writes their files then.
    var keepsCacheFiles = false
    /// Lists curl reads without copying them (`CURLOPT_CONNECT_TO`), kept while the options hold.
    private var keptLists: [CurlHeaderList] = []
    /// curl writes a human-readable message for the last error here (`CURLOPT_ERRORBUFFER`).
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init?() {
        LibCurl.ensureInitialized()
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        self.prepareForUse()
    }

    deinit {
        self.leaveCacheFilesUnlessLearnt()
        curl_easy_cleanup(self.raw)
        self.errorBuffer.deallocate()
    }

    /// Returns every option to its default, ready for the next transfer.
    ///
    /// `curl_easy_reset` leaves a handle attached to the share it was given (`CURLOPT_SHARE`), and
    /// with it the share's cookies; detaching first keeps a cookie jar's cookies out of the next
    /// transfer and lets the jar be freed while the handle waits in the pool.
    ///
    /// Before that, the list of cookie files (`CURLOPT_COOKIEFILE ""` adds an entry, which curl
    /// frees when a transfer starts) is emptied: libcurl 7.88's reset loses a list that no transfer
    /// consumed — a handle configured for a cookie jar whose transfer never started — and
    /// LeakSanitizer found those entries. With the share still attached, this keeps its cookies.
    ///
    /// A handle that ``keepsCacheFiles`` is cleaned up and replaced by a new one instead: curl keeps
    /// HSTS and Alt-Svc caches through a reset (the next transfer would be upgraded or sent to an
    /// alternative service it never asked for), and writes their files only when a handle is
    /// cleaned up. Unless a response head arrived (nothing could have been learnt), the files are
    /// left as they were: the HSTS file is read only when a transfer starts, so a handle whose
    /// transfer never started would write an empty cache over it.
    func reset() {
        if self.keepsCacheFiles {
            self.leaveCacheFilesUnlessLearnt()
            if let fresh = curl_easy_init() {
                curl_easy_cleanup(self.raw)
                self.raw = fresh
                self.keepsCacheFiles = false
                self.keptLists.removeAll()
                self.setup = nil
                self.prepareForUse()
                return
            }
        }
        _ = ccurl_easy_setopt_string(self.raw, CURLOPT_COOKIEFILE, nil)
        _ = ccurl_easy_setopt_ptr(self.raw, CURLOPT_SHARE, nil)
        curl_easy_reset(self.raw)
        self.keptLists.removeAll()
        self.setup = nil
        self.prepareForUse()
    }

    /// Keeps curl from writing the HSTS and Alt-Svc files when the handle is cleaned up, unless a
    /// response head arrived since the handle was set up (see ``reset()``).
    private func leaveCacheFilesUnlessLearnt() {
        guard self.keepsCacheFiles, self.info(long: CURLINFO_HEADER_SIZE) ?? 0 == 0 else { return }
        _ = ccurl_easy_setopt_long(self.raw, CURLOPT_HSTS_CTRL, 0)
        _ = ccurl_easy_setopt_long(self.raw, CURLOPT_ALTSVC_CTRL, Int(CURLALTSVC_READONLYFILE))
    }

    /// Keeps `list` alive until the handle is reset: curl reads it without copying it.
    func keep(_ list: CurlHeaderList) {
        self.keptLists.append(list)
    }

    /// Clears the last error message, for a handle used again without a reset.
    func forgetLastError() {
        self.errorBuffer[0] = 0
    }

    private func prepareForUse() {
        self.errorBuffer[0] = 0
        _ = ccurl_easy_setopt_ptr(self.raw, CURLOPT_ERRORBUFFER, self.errorBuffer)
        // A multi-threaded program must not let curl use signals (SIGALRM for DNS timeouts).
        _ = ccurl_easy_setopt_long(self.raw, CURLOPT_NOSIGNAL, 1)
    }

    /// curl's message for the last failure on this handle, or `nil` when it left none.
    var errorMessage: String? {
        self.errorBuffer[0] == 0 ? nil : String(cString: self.errorBuffer)
    }

    // MARK: Options

    func set(_ option: CURLoption, _ value: Int) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_long(self.raw, option, value), option)
    }

    func set(_ option: CURLoption, _ value: Bool) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_long(self.raw, option, value ? 1 : 0), option)
    }

    func set(_ option: CURLoption, offset value: Int64) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_off_t(self.raw, option, curl_off_t(value)), option)
    }

    /// Sets a string option; curl copies the string (true of every string option Curlew uses).
    func set(_ option: CURLoption, _ value: String) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_string(self.raw, option, value), option)
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_ptr(self.raw, option, value), option)
    }

    func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_slist(self.raw, option, value), option)
    }

    func set(_ option: CURLoption, callback value: ccurl_data_callback) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_data_callback(self.raw, option, value), option)
    }

    func setSocketCallbacks(
        open: ccurl_opensocket_callback,
        close: ccurl_closesocket_callback,
        context: UnsafeMutableRawPointer
    ) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_opensocket_callback(self.raw, open), CURLOPT_OPENSOCKETFUNCTION)
        try Self.check(ccurl_easy_setopt_ptr(self.raw, CURLOPT_OPENSOCKETDATA, context), CURLOPT_OPENSOCKETDATA)
        try Self.check(ccurl_easy_setopt_closesocket_callback(self.raw, close), CURLOPT_CLOSESOCKETFUNCTION)
        try Self.check(ccurl_easy_setopt_ptr(self.raw, CURLOPT_CLOSESOCKETDATA, context), CURLOPT_CLOSESOCKETDATA)
    }

    func setDebugCallback(_ value: ccurl_debug_callback, context: UnsafeMutableRawPointer) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_debug_callback(self.raw, value), CURLOPT_DEBUGFUNCTION)
        try Self.check(ccurl_easy_setopt_ptr(self.raw, CURLOPT_DEBUGDATA, context), CURLOPT_DEBUGDATA)
    }

    func setSeekCallback(_ value: ccurl_seek_callback, context: UnsafeMutableRawPointer) throws(TransferError) {
        try Self.check(ccurl_easy_setopt_seek_callback(self.raw, value), CURLOPT_SEEKFUNCTION)
        try Self.check(ccurl_easy_setopt_ptr(self.raw, CURLOPT_SEEKDATA, context), CURLOPT_SEEKDATA)
    }

    private static func check(_ code: CURLcode, _ option: CURLoption) throws(TransferError) {
        guard code != CURLE_OK else { return }
        throw TransferError(curlCode: code, message: "curl_easy_setopt(\(option.rawValue)) failed", osErrno: nil, url: nil)
    }

    // MARK: Information

    func info(long item: CURLINFO) -> Int? {
        var value = 0
        return ccurl_easy_getinfo_long(self.raw, item, &value) == CURLE_OK ? value : nil
    }

    func info(offset item: CURLINFO) -> Int64? {
        var value: curl_off_t = 0
        return ccurl_easy_getinfo_off_t(self.raw, item, &value) == CURLE_OK ? Int64(value) : nil
    }

    func info(string item: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>? = nil
        guard ccurl_easy_getinfo_string(self.raw, item, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}
