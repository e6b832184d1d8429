import BenchKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `urlsession`: FoundationNetworking's `URLSession`, completion-handler style, as in the perf
/// anchors: an ephemeral configuration with `httpMaximumConnectionsPerHost = C` and no URL cache;
/// each request is `dataTask(with:completionHandler:)` (the body buffered into `Data`), and each
/// completion handler (on the session's delegate queue) starts the next task.
final class URLSessionClient: LoadClient {
    private let session: URLSession
    private let request: URLRequest

    init(options: BenchOptions) throws(ClientSetupError) {
        if options.scenario == .batch {
            throw .batchNotSupported
        }
        if options.scenario == .stream {
            throw .unsupported(
                note: "dataTask(with:completionHandler:) buffers the whole body into one Data; reading it in chunks needs a URLSessionDataDelegate, which this client does not use")
        }
        if options.scenario == .h2 || options.caFile != nil {
            // FoundationNetworking on Linux always uses libcurl's default CA bundle
            // (`_EasyHandle.setCARootBundlePath`; only Android reads a CA file from the environment)
            // and has no server-trust challenge, so it cannot trust the benchmark's test CA.
            throw .unsupported(
                note: "URLSession on Linux cannot trust a custom CA (libcurl's default bundle only, no server-trust challenge), so it cannot reach the TLS servers")
        }
        guard let url = URL(string: options.url), url.host != nil else {
            throw .failed("\"\(options.url)\" is not an absolute URL")
        }
        var request = URLRequest(url: url)
        if options.scenario == .post {
            request.httpMethod = "POST"
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(repeating: UInt8(ascii: "x"), count: options.bodyBytes)
        }
        self.request = request

        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = options.connections
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration)
    }

    func start(_ ticket: RequestTicket) {
        let task = self.session.dataTask(with: self.request) { [self] data, response, error in
            let outcome: RequestOutcome
            if let error {
                outcome = .failure(String(describing: error))
            } else if let http = response as? HTTPURLResponse {
                outcome = .response(status: http.statusCode, bytes: data?.count ?? 0)
            } else {
                outcome = .failure("no HTTP response")
            }
            if let next = ticket.finish(outcome) {
                self.start(next)
            }
        }
        task.resume()
    }

    func shutdown(_ completion: @escaping @Sendable () -> Void) {
        self.session.invalidateAndCancel()
        completion()
    }
}
