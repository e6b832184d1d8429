/// Makes a raw path usable in a URL: bytes outside RFC 3986's unreserved, reserved and `%` characters
/// (spaces, quotes, non-ASCII…) are percent-encoded; everything else, `?`, `&` and `=` included, stays.
enum URLPathEscaping {
    private static let kept = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%".utf8)

    static func escape(_ path: String) -> String {
        var output = ""
        output.reserveCapacity(path.utf8.count)
        for byte in path.utf8 {
            if kept.contains(byte) {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                output += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return output
    }
}
