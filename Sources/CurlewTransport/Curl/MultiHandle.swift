internal import CCurl

/// The one libcurl multi handle (`CURLM *`) of an engine. Used on the engine's context only.
final class MultiHandle {
    let raw: UnsafeMutableRawPointer

    init?() {
        LibCurl.ensureInitialized()
        guard let raw = curl_multi_init() else { return nil }
        self.raw = raw
    }

    /// Frees the handle. Closes pooled connections, which calls the close-socket callbacks.
    func cleanup() {
        curl_multi_cleanup(self.raw)
    }

    func set(_ option: CURLMoption, _ value: Int) {
        _ = ccurl_multi_setopt_long(self.raw, option, value)
    }

    func set(_ option: CURLMoption, pointer value: UnsafeMutableRawPointer?) {
        _ = ccurl_multi_setopt_ptr(self.raw, option, value)
    }

    func setCallbacks(socket: ccurl_socket_callback, timer: ccurl_timer_callback, context: UnsafeMutableRawPointer) {
        _ = ccurl_multi_setopt_socket_callback(self.raw, socket)
        _ = ccurl_multi_setopt_ptr(self.raw, CURLMOPT_SOCKETDATA, context)
        _ = ccurl_multi_setopt_timer_callback(self.raw, timer)
        _ = ccurl_multi_setopt_ptr(self.raw, CURLMOPT_TIMERDATA, context)
    }

    func add(_ easy: EasyHandle) -> CURLMcode {
        curl_multi_add_handle(self.raw, easy.raw)
    }

    func remove(_ easy: EasyHandle) {
        _ = curl_multi_remove_handle(self.raw, easy.raw)
    }

    /// Tells curl that `socket` is ready (or that its timer expired, for `CURL_SOCKET_TIMEOUT`).
    func socketAction(_ socket: Int32, events: Int32) {
        var running: Int32 = 0
        _ = curl_multi_socket_action(self.raw, socket, events, &running)
    }

    /// The next finished transfer: its easy handle and result, or `nil` when none is left.
    func nextCompleted() -> (easy: UnsafeMutableRawPointer, result: CURLcode)? {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(self.raw, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            return (easy, ccurl_message_result(message))
        }
        return nil
    }
}
