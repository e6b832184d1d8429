import NIOCore

extension TestServer {
    /// The body of `.json`, byte for byte (sent with `Content-Type: application/json`).
    public static let jsonDocument =
        #"{"name":"curlew","kind":"test-document","version":1,"numbers":[1,2,3],"#
        + #""nested":{"flag":true,"nothing":null,"text":"caf\u00e9 \"quoted\" \\ /"}}"#
}

/// Bodies that never change, built once and shared by every connection (a `ByteBuffer` copy is a
/// reference-count increment).
enum FixedBodies {
    static let json = ByteBuffer(string: TestServer.jsonDocument)
    static let redirected = ByteBuffer(string: "redirected")
    static let redirecting = ByteBuffer(string: "redirecting\n")
    static let delayed = ByteBuffer(string: "delayed\n")
    static let notFound = ByteBuffer(string: "not found\n")
    static let root = ByteBuffer(string: "curlew-test-server\n")
    static let hugeHeaders = ByteBuffer(string: "huge headers\n")
}
