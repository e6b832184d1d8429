import CurlewTestServer
import CurlewTransport
import Foundation

/// One row of the fault matrix: a hostile or broken server (or client setting), the request that
/// meets it, and the one typed error it must end in.
struct FaultRow: Sendable, Hashable, CustomStringConvertible {
    /// What the row provokes.
    enum Fault: String, Sendable, Hashable, CaseIterable {
        case acceptThenClose = "accept then close"
        case emptyReply = "empty reply"
        case reset = "reset before the reply"
        case refused = "connection refused"
        case shortBody = "short body vs Content-Length"
        case badStatusLine = "invalid status line"
        case oversizedHeaderLine = "1 MiB header line"
        case manyHeaders = "10,000 headers"
        case invalidChunked = "invalid chunked encoding"
        case dripHeadVsTotal = "head dripped vs total timeout"
        case stallHeadVsIdle = "head stalled vs idle timeout"
        case dripBodyVsTotal = "body dripped vs total timeout"
        case stallBodyVsIdle = "body stalled vs idle timeout"
        case fullBacklogVsConnect = "full backlog vs connect timeout"
        case redirectLoop = "redirect loop"
        case redirectToFile = "redirect to file://"
        case gzipBomb = "gzip bomb (1 MB → 1 GiB)"
        case doubleGzipBomb = "double-gzip bomb"
        case tlsSelfSigned = "TLS: self-signed certificate"
        case tlsWrongHost = "TLS: wrong host"
        case tlsExpired = "TLS: expired certificate"
        case tlsMissingCAFile = "TLS: missing CA file"
        case tlsNoClientCertificate = "TLS: no client certificate (mutual TLS)"
        case tlsUntrustedClientCertificate = "TLS: untrusted client certificate"
        case httpsToPlainPort = "https to a plain port"
        case httpToTLSPort = "http to the TLS port"
    }

    let fault: Fault

    static let all = Fault.allCases.map(FaultRow.init)

    var description: String { self.fault.rawValue }

    /// The codes the row may end in: one, but where the kernel decides between two.
    ///
    /// - A connection closed at accept: curl reads the end of the stream (curl 52,
    ///   `badServerResponse`) or, having written its request to a closed socket, the reset that
    ///   answers it (curl 56, `networkConnectionLost`). Either way the retry policy sees a connection
    ///   closed before any response byte.
    /// - A client certificate refused by a TLS 1.3 server: the server refuses it after the client
    ///   has finished the handshake, with an alert, and closes. curl usually reads the alert (curl 56
    ///   with `tlsv13 alert certificate required`, `secureConnectionFailed`), but when its request
    ///   meets the closed socket first, the failure is the socket's (curl 55 with `ENOTCONN` or
    ///   `EPIPE`, `networkConnectionLost`): nothing the client received says why.
    var accepted: Set<TransferError.Code> {
        switch self.fault {
        case .acceptThenClose: [.badServerResponse, .networkConnectionLost]
        case .tlsNoClientCertificate, .tlsUntrustedClientCertificate: [.secureConnectionFailed, .networkConnectionLost]
        default: [self.expected]
        }
    }

    /// Whether ``RetryPolicy/default`` retries a GET that met the fault and ended in `code`:
    /// timeouts, refusals, and connections that ended before any response byte.
    func isRetryable(after code: TransferError.Code) -> Bool {
        switch self.fault {
        case .acceptThenClose, .emptyReply, .reset, .refused, .dripHeadVsTotal, .stallHeadVsIdle, .dripBodyVsTotal,
            .stallBodyVsIdle, .fullBacklogVsConnect, .httpToTLSPort:
            return true
        case .tlsNoClientCertificate, .tlsUntrustedClientCertificate:
            return code == .networkConnectionLost
        default:
            return false
        }
    }

    /// The code the row ends in (for ``accepted`` sets of two, the usual one).
    var expected: TransferError.Code {
        switch self.fault {
        case .acceptThenClose, .emptyReply, .badStatusLine, .invalidChunked, .httpToTLSPort: return .badServerResponse
        case .reset, .shortBody: return .networkConnectionLost
        case .refused: return .cannotConnectToHost
        case .oversizedHeaderLine, .manyHeaders: return .responseHeadTooLarge
        case .dripHeadVsTotal, .stallHeadVsIdle, .dripBodyVsTotal, .stallBodyVsIdle, .fullBacklogVsConnect: return .timedOut
        case .redirectLoop: return .tooManyRedirects
        case .redirectToFile: return .unsupportedURL
        case .gzipBomb, .doubleGzipBomb: return .responseTooLarge
        case .tlsSelfSigned, .tlsWrongHost, .tlsExpired: return .serverCertificateUntrusted
        case .tlsMissingCAFile, .tlsNoClientCertificate, .tlsUntrustedClientCertificate, .httpsToPlainPort:
            return .secureConnectionFailed
        }
    }

    /// The request that meets the fault on `server`.
    func request(on server: TestServer) -> TransferRequest {
        var options = TransferOptions()
        let url: URL
        switch self.fault {
        case .acceptThenClose: url = server.faultURL(.acceptThenClose)
        case .emptyReply: url = server.faultURL(.emptyReply)
        case .reset: url = server.faultURL(.reset)
        case .refused: url = server.refusedURL
        case .shortBody: url = server.faultURL(.shortBody)
        case .badStatusLine: url = server.faultURL(.badStatusLine)
        case .oversizedHeaderLine: url = server.faultURL(.oversizedHeaderLine)
        case .manyHeaders: url = server.faultURL(.manyHeaders)
        case .invalidChunked: url = server.faultURL(.invalidChunked)
        case .dripHeadVsTotal:
            url = server.faultURL(.dripHead)
            options.timeout = .seconds(1)
        case .stallHeadVsIdle:
            url = server.faultURL(.stallHead)
            options.idleTimeout = .seconds(1)
        case .dripBodyVsTotal:
            url = server.faultURL(.dripBody)
            options.timeout = .seconds(1)
        case .stallBodyVsIdle:
            url = server.faultURL(.stallBody)
            options.idleTimeout = .seconds(1)
        case .fullBacklogVsConnect:
            url = server.blackholeURL
            options.connectTimeout = .milliseconds(300)
        case .redirectLoop: url = server.url(.redirectLoop)
        case .redirectToFile: url = server.url(.redirectTo(url: "file:///etc/passwd"))
        case .gzipBomb: url = server.faultURL(.gzipBomb)
        case .doubleGzipBomb: url = server.faultURL(.doubleGzipBomb)
        case .tlsSelfSigned:
            url = server.url(.selfSigned)
            options.tls.trustedRootsFile = TestServer.caCertificatePath
        case .tlsWrongHost:
            url = server.url(.wrongHost)
            options.tls.trustedRootsFile = TestServer.faultCACertificatePath
        case .tlsExpired:
            url = server.url(.expired)
            options.tls.trustedRootsFile = TestServer.faultCACertificatePath
        case .tlsMissingCAFile:
            url = server.url(.bytes(10), tls: true)
            options.tls.trustedRootsFile = "/nonexistent/curlew-ca.pem"
        case .tlsNoClientCertificate:
            url = server.mutualTLSBaseURL.appendingPathComponent("bytes/10")
            options.tls.trustedRootsFile = TestServer.caCertificatePath
        case .tlsUntrustedClientCertificate:
            url = server.mutualTLSBaseURL.appendingPathComponent("bytes/10")
            options.tls.trustedRootsFile = TestServer.caCertificatePath
            options.tls.clientCertificate = ClientCertificate(
                certificateFile: TestServer.untrustedClientCertificatePath, privateKeyFile: TestServer.untrustedClientKeyPath)
        case .httpsToPlainPort:
            url = server.url(.httpsToPlainPort)
            options.tls.trustedRootsFile = TestServer.caCertificatePath
        case .httpToTLSPort: url = server.url(.httpToTLSPort)
        }
        return TransferRequest(url: url, options: options)
    }
}
