import Foundation
internal import CCurl

#if canImport(Glibc)
import Glibc
#endif

extension TransferError {
    /// The one place where curl's result codes become Curlew errors.
    ///
    /// curl keeps an OS `errno` (`CURLINFO_OS_ERRNO`) only for the few codes that come from a system
    /// call (connect, send, receive); for any other code the number is not about this failure — before
    /// curl 8.8 it even survives `curl_easy_reset` and describes an earlier transfer of a reused
    /// handle. So `osErrno` is kept only for those codes, and it changes the code only where it tells
    /// two failures of one curl code apart: a connect that timed out (`ETIMEDOUT`) rather than was
    /// refused. (The engine also retires handles that carry an `errno`, so a kept one is this
    /// attempt's.)
    ///
    /// Some curl codes say less than the situation does, and the table reads them in context (each
    /// row is checked against a real fault by the fault-matrix suite):
    ///
    /// | curl | situation | code |
    /// | --- | --- | --- |
    /// | 1 `UNSUPPORTED_PROTOCOL` | any: Curlew checks every URL's scheme itself (also on redirects), so curl reports it only for a reply that is not HTTP/1.x or HTTP/2 (`HTTP/1.1 abc`, HTTP/0.9) | `badServerResponse` |
    /// | 27 `OUT_OF_MEMORY`, 100 `TOO_LARGE` | before the response head was complete: curl refused a header line over its 100 KiB limit | `responseHeadTooLarge` |
    /// | 56 `RECV_ERROR` | no `errno` and a message about chunks: invalid chunked framing | `badServerResponse` |
    /// | 55 `SEND_ERROR`, 56 `RECV_ERROR` | no `errno` and a message about a TLS alert: the server ended the handshake, as TLS 1.3 servers do after it when they refuse the client certificate (`tlsv13 alert certificate required`, `tlsv1 alert unknown ca`) | `secureConnectionFailed` |
    /// | 56 `RECV_ERROR` | otherwise (reset, TLS read failure) | `networkConnectionLost` |
    ///
    /// - Parameter awaitingHead: Whether the attempt had not yet received its whole response head.
    init(curlCode: CURLcode, message: String?, osErrno: Int32?, url: URL?, awaitingHead: Bool = false) {
        let errno = Self.savesErrno(curlCode) ? osErrno.flatMap { $0 == 0 ? nil : $0 } : nil
        let text = message.flatMap { $0.isEmpty ? nil : $0 } ?? String(cString: curl_easy_strerror(curlCode))
        let code = Self.code(for: curlCode, errno: errno, message: text, awaitingHead: awaitingHead)
        self.init(code, text, curlCode: Int(curlCode.rawValue), osErrno: errno, failingURL: url)
    }

    /// Whether curl records an OS `errno` for this code (per `CURLINFO_OS_ERRNO`'s documentation).
    static func savesErrno(_ curlCode: CURLcode) -> Bool {
        switch curlCode {
        case CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_RECV_ERROR, CURLE_SEND_ERROR,
            CURLE_FAILED_INIT, CURLE_INTERFACE_FAILED:
            return true
        default:
            return false
        }
    }

    /// Whether a read or write failure's message reports a TLS alert from the peer: OpenSSL's
    /// `…:SSL routines::tlsv13 alert certificate required`, GnuTLS's `A TLS fatal alert has been received`.
    private static func namesTLSAlert(_ message: String) -> Bool {
        let text = message.lowercased()
        return text.contains("alert") && (text.contains("ssl") || text.contains("tls"))
    }

    /// `CURLE_TOO_LARGE` (curl 8.6 and later; Debian 12's headers do not have it).
    private static let curlTooLarge: UInt32 = 100

    private static func code(for curlCode: CURLcode, errno: Int32?, message: String, awaitingHead: Bool) -> Code {
        switch curlCode {
        case CURLE_UNSUPPORTED_PROTOCOL: return .badServerResponse
        case CURLE_URL_MALFORMAT: return .badURL
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .cannotFindHost
        case CURLE_COULDNT_CONNECT: return errno == ETIMEDOUT ? .timedOut : .cannotConnectToHost
        case CURLE_PROXY: return .cannotConnectToHost  // a SOCKS proxy refused (credentials, target)
        case CURLE_OPERATION_TIMEDOUT: return .timedOut
        case CURLE_PEER_FAILED_VERIFICATION: return .serverCertificateUntrusted
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE,
            CURLE_SSL_SHUTDOWN_FAILED:
            return .secureConnectionFailed
        case CURLE_GOT_NOTHING, CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return .badServerResponse
        case CURLE_RECV_ERROR where errno == nil && message.lowercased().contains("chunk"):
            return .badServerResponse
        case CURLE_RECV_ERROR where errno == nil && Self.namesTLSAlert(message),
            CURLE_SEND_ERROR where errno == nil && Self.namesTLSAlert(message):
            return .secureConnectionFailed
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            return .networkConnectionLost
        case CURLE_OUT_OF_MEMORY where awaitingHead:
            return .responseHeadTooLarge
        case CURLE_TOO_MANY_REDIRECTS: return .tooManyRedirects
        case CURLE_FILESIZE_EXCEEDED: return .responseTooLarge
        case CURLE_BAD_CONTENT_ENCODING: return .cannotDecodeContentData
        case CURLE_SEND_FAIL_REWIND: return .requestBodyStreamExhausted
        case CURLE_READ_ERROR: return .cannotOpenFile
        case CURLE_WRITE_ERROR: return .cannotWriteToFile
        case CURLE_ABORTED_BY_CALLBACK: return .cancelled
        default:
            return curlCode.rawValue == Self.curlTooLarge && awaitingHead ? .responseHeadTooLarge : .unknown
        }
    }
}
