import NIOHTTP1

/// The header block of `.hugeHeaders`: 100-byte `X-Huge: aaaa…` lines adding up to about the size asked.
///
/// Every line has the same name and one of 26 values (`a…`, `b…`, … cycling). That is deliberate: NIO
/// never splits an outgoing header block into CONTINUATION frames, so over HTTP/2 the HPACK-encoded block
/// must fit one frame (16 KiB unless the client allows more). The 26 pairs fit HPACK's default 4 KiB
/// dynamic table, so every repeat encodes as a one-byte index: the client still decodes the full size
/// (about 1.5 MiB fits), and HTTP/1.1 gets exactly the same lines.
enum HugeHeaders {
    static let name = "X-Huge"
    /// One line is `X-Huge: value\r\n`: 6 bytes of name, 2 of separator, 90 of value, 2 of line end.
    static let lineLength = 100

    private static let values: [String] = (0..<26).map { letter in
        String(repeating: Character(Unicode.Scalar(UInt8(ascii: "a") + UInt8(letter))), count: lineLength - 10)
    }

    /// `kilobytes × 1024 / 100` lines.
    static func make(kilobytes: Int) -> HTTPHeaders {
        let count = kilobytes * 1024 / lineLength
        var headers = HTTPHeaders()
        headers.reserveCapacity(count + 2)
        for index in 0..<count {
            headers.add(name: name, value: values[index % values.count])
        }
        return headers
    }
}
