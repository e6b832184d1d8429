import CurlewTransport
import HTTPTypes

/// Several monitors heard as one: each event goes to every monitor, in the order given.
///
/// A manager combines its monitors so (yours first, then its logging and metrics); use one to hand
/// a group of monitors around as a single value.
public struct CompositeEventMonitor: EventMonitor {
    /// The monitors, in the order they hear each event.
    public let monitors: [any EventMonitor]

    /// Combines `monitors`.
    public init(_ monitors: [any EventMonitor]) {
        self.monitors = monitors
    }

    public func requestDidBegin(_ request: MonitoredRequest) {
        for monitor in self.monitors { monitor.requestDidBegin(request) }
    }

    public func request(_ request: MonitoredRequest, didAdapt adapted: HTTPRequest, attempt: Int) {
        for monitor in self.monitors { monitor.request(request, didAdapt: adapted, attempt: attempt) }
    }

    public func request(_ request: MonitoredRequest, didStart attempt: RequestAttempt) {
        for monitor in self.monitors { monitor.request(request, didStart: attempt) }
    }

    public func request(_ request: MonitoredRequest, didReceive head: HTTPResponse, in attempt: RequestAttempt) {
        for monitor in self.monitors { monitor.request(request, didReceive: head, in: attempt) }
    }

    public func request(_ request: MonitoredRequest, didUpdate progress: TransferProgress, in attempt: RequestAttempt) {
        for monitor in self.monitors { monitor.request(request, didUpdate: progress, in: attempt) }
    }

    public func request(
        _ request: MonitoredRequest, didComplete attempt: RequestAttempt,
        with result: Result<TransferResponse, TransferError>, after duration: Duration?
    ) {
        for monitor in self.monitors { monitor.request(request, didComplete: attempt, with: result, after: duration) }
    }

    public func request(_ request: MonitoredRequest, willRetryAfter wait: Duration, because reason: RetryReason) {
        for monitor in self.monitors { monitor.request(request, willRetryAfter: wait, because: reason) }
    }

    public func request(_ request: MonitoredRequest, didFinishWith result: Result<TransferResponse, any Error>) {
        for monitor in self.monitors { monitor.request(request, didFinishWith: result) }
    }
}
