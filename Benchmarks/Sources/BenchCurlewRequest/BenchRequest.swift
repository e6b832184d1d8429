import BenchKit
import CurlewTransport
import Foundation

/// The one `TransferRequest` every request of a run repeats, built from the options: shared by
/// bench-curlew and bench-teaching, so the rejected designs send exactly what the real clients send.
public enum BenchRequest {
    /// GET the URL (`get`, `stream`, `idle`, `lateness`, `batch`), POST `bodyBytes` bytes (`post`), or GET
    /// over HTTP/2 on TLS trusting `caFile` (`h2`: `httpVersion .automatic`, the engine default,
    /// negotiates h2 through ALPN and the engine multiplexes). The body goes to memory (`stream`'s
    /// clients replace the destination with a stream).
    public static func make(_ options: BenchOptions) throws(ClientSetupError) -> TransferRequest {
        guard let url = URL(string: options.url), url.host != nil else {
            throw .failed("\"\(options.url)\" is not an absolute URL")
        }
        var request = TransferRequest(url: url)
        request.destination = .memory
        request.options.proxy = .none
        switch options.scenario {
        case .get, .stream, .idle, .lateness, .batch:
            break
        case .post:
            request.head.method = .post
            request.head.headerFields[.contentType] = "application/octet-stream"
            request.body = .data(Data(repeating: UInt8(ascii: "x"), count: options.bodyBytes))
        case .h2:
            request.options.httpVersion = .automatic
        }
        if let caFile = options.caFile {
            request.options.tls.trustedRootsFile = caFile
        }
        return request
    }

    /// The engine configuration of every Curlew client: `--connections` to the host (by default
    /// as many as transfers in flight); everything else is the default (HTTP/2 multiplexing on).
    public static func engineConfiguration(_ options: BenchOptions) -> TransferEngine.Configuration {
        var configuration = TransferEngine.Configuration()
        configuration.maximumConnectionsPerHost = options.connections
        return configuration
    }
}
