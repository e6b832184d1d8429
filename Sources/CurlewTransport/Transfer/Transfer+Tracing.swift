internal import CCurl

extension Transfer {
    /// Installs curl's debug callback when the request has a ``WireTracer``, and only then
    /// (`CURLOPT_VERBOSE` makes curl format its notes, which costs even when nobody reads them).
    func configureTracing(_ easy: EasyHandle) throws(TransferError) {
        guard self.request.options.wireTracer != nil else { return }
        try easy.setDebugCallback(Transfer.debugCallback, context: Unmanaged.passUnretained(self).toOpaque())
        try easy.set(CURLOPT_VERBOSE, true)
    }

    static let debugCallback: ccurl_debug_callback = { _, type, data, size, userdata in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
        guard let tracer = transfer.request.options.wireTracer else { return 0 }
        let secrets = transfer.request.options.secretHeaderNames
        let bytes = UnsafeRawBufferPointer(start: data, count: size)
        let event: WireTracer.Event
        switch type {
        case CURLINFO_TEXT:
            event = .note(WireTracer.redacting(Transfer.text(bytes, trimmingLineEnd: true), secretHeaderNames: secrets))
        case CURLINFO_HEADER_OUT:
            event = .requestHead(WireTracer.redacting(Transfer.text(bytes, trimmingLineEnd: true), secretHeaderNames: secrets))
        case CURLINFO_HEADER_IN:
            let line = Transfer.text(bytes, trimmingLineEnd: true)
            guard !line.isEmpty else { return 0 }  // the blank line that ends the head
            event = .responseHeader(WireTracer.redacting(line, secretHeaderNames: secrets))
        case CURLINFO_DATA_OUT:
            event = .requestBody(bytes: size)
        case CURLINFO_DATA_IN:
            event = .responseBody(bytes: size)
        default:
            return 0  // TLS records: nothing a reader of the exchange needs
        }
        tracer.handler(transfer.id, event)
        return 0
    }

    private static func text(_ bytes: UnsafeRawBufferPointer, trimmingLineEnd: Bool) -> String {
        var end = bytes.count
        while trimmingLineEnd, end > 0, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") {
            end -= 1
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
    }
}
