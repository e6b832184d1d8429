import HTTPTypes

/// One request curl sends for a transfer. A transfer makes several when it follows redirects or
/// resumes after a pause; each attempt configures the easy handle from scratch.
struct Attempt: Hashable {
    /// The validated URL.
    var target: RequestTarget
    var method: HTTPRequest.Method
    var headerFields: HTTPFields
    /// Whether the request body is sent (a 303, or a POST redirected by 301/302, drops it).
    var sendsBody: Bool
    /// How many redirects led here.
    var redirectCount: Int
    /// Set when this attempt continues a paused body with a range request.
    var resume: ResumeRequest?

    /// The head as the delegate sees it (for redirect decisions).
    var head: HTTPRequest {
        var head = HTTPRequest(method: self.method, scheme: self.target.scheme,
                               authority: self.target.authority, path: self.target.path)
        head.headerFields = self.headerFields
        return head
    }
}

/// A range request continuing a paused body.
struct ResumeRequest: Hashable {
    /// The first byte wanted: the count already received.
    var offset: Int64
    /// What identifies the entity (`If-Range`).
    var validator: ResumeValidator
}
