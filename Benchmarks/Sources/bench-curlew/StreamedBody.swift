import BenchKit
import CurlewTransport

/// The `stream` scenario's reading of a body: every chunk as it arrives, counted and dropped, as an
/// application that writes a download elsewhere would.
enum StreamedBody {
    /// Reads `response`'s body to its end, keeping none of it: a success with the bytes that arrived
    /// for a 2xx status, or the error that ended it.
    static func read(_ response: StreamedResponse) async -> RequestOutcome {
        var bytes = 0
        do {
            for try await chunk in response.body { bytes += chunk.count }
        } catch {
            return .failure(String(describing: error))
        }
        return .response(status: response.head.status.code, bytes: bytes)
    }
}
