import NIOCore

extension TestServer {
    /// The body of `.json`, byte for byte (sent with `Content-Type: application/json`).
    public static let jsonDocument =
        #"{"name":"curlew","kind":"test-document","version":1,"numbers":[1,2,3],"#
        + #""nested":{"flag":true,"nothing":null,"text":"caf\u00e9 \"quoted\" \\ /"}}"#

    /// The body of `.xml`, byte for byte (sent with `Content-Type: application/xml`).
    public static let xmlDocument =
        #"<?xml version="1.0" encoding="UTF-8"?><feed version="1"><item id="1">caf&#233;</item><item id="2"/></feed>"#

    /// The body of `.propertyList`, byte for byte (sent with `Content-Type: application/x-plist`).
    public static let propertyListDocument =
        #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>name</key><string>curlew</string>"#
        + #"<key>version</key><integer>1</integer></dict></plist>"#
}

/// Bodies that never change, built once and shared by every connection (a `ByteBuffer` copy is a
/// reference-count increment).
enum FixedBodies {
    static let json = ByteBuffer(string: TestServer.jsonDocument)
    static let xml = ByteBuffer(string: TestServer.xmlDocument)
    static let propertyList = ByteBuffer(string: TestServer.propertyListDocument)
    static let redirected = ByteBuffer(string: "redirected")
    static let redirecting = ByteBuffer(string: "redirecting\n")
    static let delayed = ByteBuffer(string: "delayed\n")
    static let notFound = ByteBuffer(string: "not found\n")
    static let root = ByteBuffer(string: "curlew-test-server\n")
    static let hugeHeaders = ByteBuffer(string: "huge headers\n")
}
