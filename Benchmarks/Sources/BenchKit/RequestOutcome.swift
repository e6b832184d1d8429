/// How one request ended, as a client reports it to the closed loop.
public enum RequestOutcome: Sendable {
    /// A complete response with a 2xx status; `bytes` response body bytes arrived.
    case success(bytes: Int)
    /// A transport error, or a status other than 2xx (the description says which).
    case failure(String)

    /// A response with `status`: a success for 2xx, an error otherwise.
    public static func response(status: Int, bytes: Int) -> RequestOutcome {
        (200..<300).contains(status) ? .success(bytes: bytes) : .failure("HTTP status \(status)")
    }
}
