import BenchKit
import CurlewTransport

extension RequestOutcome {
    /// A transfer's result: a 2xx response is a success, anything else an error. A response's
    /// protocol goes to `check`.
    init(_ result: Result<TransferResponse, TransferError>, check: ProtocolCheck) {
        switch result {
        case .success(let response):
            check.record(isHTTP2: response.metrics.httpVersion == .http2)
            self = .response(status: response.head.status.code, bytes: response.body?.count ?? 0)
        case .failure(let error):
            self = .failure(error.description)
        }
    }
}
