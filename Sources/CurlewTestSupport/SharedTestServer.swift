import CurlewTestServer
import CurlewTransport
import Foundation
import HTTPTypes

/// The in-process ``TestServer`` the behaviour tests of every target share, bound to 127.0.0.1 only
/// and started on first use.
///
/// One server for the whole test process: its global ``TestServer/stats`` move with every test
/// running at the time, so a test that asks what the server saw of *its* request tags it
/// (``TransferRequest/tagged(_:)``) and reads ``TestServer/requests(tagged:)``.
public enum SharedTestServer {
    /// The server, or why it could not start.
    public static let started: Result<TestServer, any Error> = Result {
        try TestServer.start(TestServer.Configuration(eventLoopThreads: 2))
    }
}

/// The shared test server (``SharedTestServer``).
///
/// - Throws: Why the server could not start.
public func testServer() throws -> TestServer {
    try SharedTestServer.started.get()
}

extension TransferRequest {
    /// A GET of a route of the shared test server, over TLS (trusting the test CA) if `tls`.
    public static func get(_ route: Route, tls: Bool = false) throws -> TransferRequest {
        let server = try testServer()
        return TransferRequest(url: server.url(route, tls: tls), options: tls ? .trustingTestCA : TransferOptions())
    }

    /// This request with the test server's tag header (``TestServer/tagHeaderName``) set to `tag`,
    /// so that ``TestServer/requests(tagged:)`` tells what the server saw of it: which `Range` it
    /// asked for, what was answered, and whether the client stayed for the whole answer.
    ///
    /// ```swift
    /// let tag = UUID().uuidString
    /// let request = TransferRequest(url: try testServer().url(.delay(120_000))).tagged(tag)
    /// ```
    public func tagged(_ tag: String) -> TransferRequest {
        var request = self
        if let name = HTTPField.Name(TestServer.tagHeaderName) {
            request.head.headerFields[name] = tag
        }
        return request
    }
}

extension TransferOptions {
    /// Options that trust the test server's CA (``TestServer/caCertificatePath``), for its TLS
    /// listeners.
    public static var trustingTestCA: TransferOptions {
        var options = TransferOptions()
        options.tls.trustedRootsFile = TestServer.caCertificatePath
        return options
    }
}
