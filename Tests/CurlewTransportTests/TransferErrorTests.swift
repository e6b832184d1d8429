import Foundation
import Testing
internal import CCurl
@testable import CurlewTransport

@Suite("Error mapping")
struct TransferErrorTests {
    @Test("curl codes map onto URLError-style codes", arguments: [
        (CURLE_UNSUPPORTED_PROTOCOL, TransferError.Code.badServerResponse),
        (CURLE_URL_MALFORMAT, .badURL),
        (CURLE_COULDNT_RESOLVE_HOST, .cannotFindHost),
        (CURLE_COULDNT_CONNECT, .cannotConnectToHost),
        (CURLE_OPERATION_TIMEDOUT, .timedOut),
        (CURLE_SSL_CONNECT_ERROR, .secureConnectionFailed),
        (CURLE_PEER_FAILED_VERIFICATION, .serverCertificateUntrusted),
        (CURLE_GOT_NOTHING, .badServerResponse),
        (CURLE_PARTIAL_FILE, .networkConnectionLost),
        (CURLE_RECV_ERROR, .networkConnectionLost),
        (CURLE_TOO_MANY_REDIRECTS, .tooManyRedirects),
        (CURLE_BAD_CONTENT_ENCODING, .cannotDecodeContentData),
        (CURLE_SEND_FAIL_REWIND, .requestBodyStreamExhausted),
        (CURLE_LOGIN_DENIED, .unknown),
    ])
    func mapping(_ curlCode: CURLcode, _ code: TransferError.Code) {
        let error = TransferError(curlCode: curlCode, message: nil, osErrno: nil, url: URL(string: "http://a.test/"))
        #expect(error.code == code)
        #expect(error.curlCode == Int(curlCode.rawValue))
        #expect(!error.message.isEmpty)
        #expect(error.failingURL?.absoluteString == "http://a.test/")
    }

    @Test func refusedConnectionIsCannotConnect() {
        let error = TransferError(curlCode: CURLE_COULDNT_CONNECT, message: "x", osErrno: ECONNREFUSED, url: nil)
        #expect(error.code == .cannotConnectToHost)
        #expect(error.osErrno == ECONNREFUSED)
    }

    /// Before curl 8.8 a reused handle reports the errno of an earlier failure: it must neither change
    /// the code nor be reported for a code curl keeps no errno for.
    @Test("an errno never rewrites a code curl keeps no errno for", arguments: [
        (CURLE_PEER_FAILED_VERIFICATION, TransferError.Code.serverCertificateUntrusted),
        (CURLE_GOT_NOTHING, .badServerResponse),
        (CURLE_WEIRD_SERVER_REPLY, .badServerResponse),
        (CURLE_UNSUPPORTED_PROTOCOL, .badServerResponse),
    ])
    func staleErrnoIgnored(_ curlCode: CURLcode, _ code: TransferError.Code) {
        let error = TransferError(curlCode: curlCode, message: nil, osErrno: ECONNREFUSED, url: nil)
        #expect(error.code == code)
        #expect(error.osErrno == nil)
    }

    @Test func receiveErrorKeepsItsErrnoButStaysConnectionLost() {
        let error = TransferError(curlCode: CURLE_RECV_ERROR, message: "x", osErrno: ECONNRESET, url: nil)
        #expect(error.code == .networkConnectionLost)
        #expect(error.osErrno == ECONNRESET)
    }

    /// A TLS 1.3 server refuses a client certificate after the handshake, with an alert that curl
    /// reads as a receive error: the connection was refused at the TLS level, not lost.
    @Test("a TLS alert from the peer is a secure-connection failure, not a lost connection", arguments: [
        (CURLE_RECV_ERROR, "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0"),
        (CURLE_RECV_ERROR, "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A000418:SSL routines::tlsv1 alert unknown ca, errno 0"),
        (CURLE_SEND_ERROR, "OpenSSL SSL_write: error:0A000412:SSL routines::sslv3 alert bad certificate, errno 0"),
        (CURLE_RECV_ERROR, "GnuTLS recv error (-12): A TLS fatal alert has been received."),
    ])
    func tlsAlertIsASecureConnectionFailure(_ curlCode: CURLcode, _ message: String) {
        #expect(TransferError(curlCode: curlCode, message: message, osErrno: nil, url: nil).code == .secureConnectionFailed)
        // With an errno the failure came from the socket, whatever the text says.
        #expect(TransferError(curlCode: curlCode, message: message, osErrno: ECONNRESET, url: nil).code
            == .networkConnectionLost)
    }

    @Test func aReadFailureWithoutAnAlertStaysConnectionLost() {
        let message = "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A000126:SSL routines::unexpected eof while reading, errno 0"
        #expect(TransferError(curlCode: CURLE_RECV_ERROR, message: message, osErrno: nil, url: nil).code
            == .networkConnectionLost)
    }

    /// curl 1 arises only from a response: Curlew checks every scheme itself, redirects included.
    @Test func unsupportedHTTPVersionIsABadServerResponse() {
        let error = TransferError(curlCode: CURLE_UNSUPPORTED_PROTOCOL, message: "Unsupported HTTP version in response",
                                  osErrno: nil, url: nil)
        #expect(error.code == .badServerResponse)
    }

    /// curl 7.88 refuses a header line over 100 KiB with 27, "Out of memory": the server's fault.
    @Test func outOfMemoryWhileReadingTheHeadIsAHeadTooLarge() {
        #expect(TransferError(curlCode: CURLE_OUT_OF_MEMORY, message: "Out of memory", osErrno: nil, url: nil,
                              awaitingHead: true).code == .responseHeadTooLarge)
        #expect(TransferError(curlCode: CURLcode(rawValue: 100), message: "too large", osErrno: nil, url: nil,
                              awaitingHead: true).code == .responseHeadTooLarge)
        #expect(TransferError(curlCode: CURLE_OUT_OF_MEMORY, message: "Out of memory", osErrno: nil, url: nil,
                              awaitingHead: false).code == .unknown)
    }

    /// Bad chunked framing is a receive error without an errno, and a bad server response.
    @Test func invalidChunkedFramingIsABadServerResponse() {
        let chunk = TransferError(curlCode: CURLE_RECV_ERROR,
                                  message: "Illegal or missing hexadecimal sequence in chunked-encoding", osErrno: 0, url: nil)
        #expect(chunk.code == .badServerResponse)
        let reset = TransferError(curlCode: CURLE_RECV_ERROR, message: "Recv failure: Connection reset by peer",
                                  osErrno: ECONNRESET, url: nil)
        #expect(reset.code == .networkConnectionLost)
        let tlsEOF = TransferError(curlCode: CURLE_RECV_ERROR, message: "OpenSSL SSL_read: unexpected eof", osErrno: 0, url: nil)
        #expect(tlsEOF.code == .networkConnectionLost)
    }

    @Test func connectThatTimedOutIsTimedOut() {
        #expect(TransferError(curlCode: CURLE_COULDNT_CONNECT, message: nil, osErrno: ETIMEDOUT, url: nil).code == .timedOut)
    }

    @Test func curlsMessageIsKept() {
        let error = TransferError(curlCode: CURLE_COULDNT_RESOLVE_HOST, message: "Could not resolve host: x.invalid",
                                  osErrno: 0, url: nil)
        #expect(error.message == "Could not resolve host: x.invalid")
        #expect(error.osErrno == nil)
    }

    @Test("every code bridges to URLError with the failing URL", arguments: TransferError.Code.allCases)
    func bridging(_ code: TransferError.Code) {
        let url = URL(string: "http://a.test/x")
        let urlError = TransferError(code, "m", failingURL: url).urlError
        #expect(urlError.code == code.urlErrorCode)
        #expect(urlError.failingURL == url)
    }
}
