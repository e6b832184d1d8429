internal import CCurl

/// Easy handles kept for reuse: a finished transfer's handle is handed to the next one, which keeps
/// curl's internal buffers and avoids an allocation storm per request. A handle comes back either
/// still set up for a reusable ``HandleSetup`` (the next transfer compares and keeps or resets it)
/// or reset.
///
/// A handle that recorded an OS `errno` is retired instead: before curl 8.8 neither a later
/// transfer nor `curl_easy_reset` clears it, so the next failure on the handle would report it (a
/// refused connect turning a later certificate failure into "cannot connect"). Failures are rare;
/// a new handle costs one allocation. Used on the engine's context only.
struct EasyHandlePool {
    /// The most handles kept; beyond it, returned handles are freed.
    static let limit = 512
    private var idle: [EasyHandle] = []

    /// Handles waiting for reuse.
    var count: Int { self.idle.count }

    /// A pooled easy handle (reset, or holding a reusable setup), or a new one (`nil` only when curl
    /// cannot allocate).
    mutating func checkOut() -> EasyHandle? {
        self.idle.popLast() ?? EasyHandle()
    }

    /// Takes back a handle that is no longer in the multi handle.
    mutating func checkIn(_ easy: EasyHandle) {
        guard easy.info(long: CURLINFO_OS_ERRNO) ?? 0 == 0 else { return }
        if easy.setup == nil { easy.reset() }
        if self.idle.count < Self.limit {
            self.idle.append(easy)
        }
    }

    /// Frees every pooled handle.
    mutating func removeAll() {
        self.idle.removeAll()
    }
}
