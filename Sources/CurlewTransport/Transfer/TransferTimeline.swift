import Foundation
internal import CCurl

/// The times a transfer spends outside curl's view of its final attempt: waiting in the engine for a
/// connection slot, and in the redirects before the final attempt. Both are noted only when they
/// happen, so a transfer that neither waits nor is redirected reads no clock for them.
struct TransferTimeline {
    /// Time spent waiting for connection slots so far.
    private(set) var slotWait: Duration = .zero
    /// When the current wait for a slot began.
    private var waitingSince: ContinuousClock.Instant?
    /// The redirected attempts' total times so far.
    private(set) var redirects: Duration = .zero

    /// The transfer starts waiting for a slot.
    mutating func beganWaitingForSlot() {
        self.waitingSince = .now
    }

    /// The transfer got the slot it waited for.
    mutating func gotSlot() {
        guard let since = self.waitingSince else { return }
        self.slotWait += .now - since
        self.waitingSince = nil
    }

    /// A redirected attempt ended after `total`.
    mutating func redirected(after total: Duration) {
        self.redirects += total
    }
}

extension Transfer {
    /// Notes the current attempt's total time when `next` follows a redirect from it.
    func noteRedirect(to next: Attempt) {
        guard let easy = self.easy, next.redirectCount > (self.attempt?.redirectCount ?? next.redirectCount) else { return }
        self.timeline.redirected(after: .microseconds(easy.info(offset: CURLINFO_TOTAL_TIME_T) ?? 0))
    }

    /// Adds to `metrics` what curl reports of the final attempt's connection and bytes, and what the
    /// transfer noted of its waits and redirects.
    ///
    /// About ten `curl_easy_getinfo` calls; IPv4 addresses fit a Swift string's inline storage, so
    /// they allocate nothing (see `Docs/Transport.md`, "Cost").
    func addConnectionMetrics(of easy: EasyHandle, to metrics: inout TransferMetrics) {
        metrics.preTransfer = .microseconds(easy.info(offset: CURLINFO_PRETRANSFER_TIME_T) ?? 0)
        metrics.redirectTime = self.timeline.redirects
        metrics.connectionSlotWait = self.timeline.slotWait
        metrics.requestHeaderBytes = Int64(easy.info(long: CURLINFO_REQUEST_SIZE) ?? 0)
        metrics.requestBodyBytes = easy.info(offset: CURLINFO_SIZE_UPLOAD_T) ?? 0
        metrics.responseHeaderBytes = Int64(easy.info(long: CURLINFO_HEADER_SIZE) ?? 0)
        metrics.responseBodyBytes = easy.info(offset: CURLINFO_SIZE_DOWNLOAD_T) ?? 0
        if LibCurl.reportsConnectionIDs { metrics.connectionID = easy.info(offset: ccurl_info_conn_id()) }
        if self.request.options.unixSocket == nil {
            metrics.remoteAddress = easy.info(string: CURLINFO_PRIMARY_IP).flatMap { $0.isEmpty ? nil : $0 }
            metrics.remotePort = easy.info(long: CURLINFO_PRIMARY_PORT).flatMap { $0 == 0 ? nil : $0 }
            metrics.localAddress = easy.info(string: CURLINFO_LOCAL_IP).flatMap { $0.isEmpty ? nil : $0 }
            metrics.localPort = easy.info(long: CURLINFO_LOCAL_PORT).flatMap { $0 == 0 ? nil : $0 }
        }
    }

    /// The URL the final response came from: `url`, or its `https` form when HSTS upgraded it.
    func responseURL(_ easy: EasyHandle, _ url: URL) -> URL {
        guard self.request.options.hstsFile != nil, url.scheme == "http",
              let effective = easy.info(string: CURLINFO_EFFECTIVE_URL), effective.hasPrefix("https:") else { return url }
        return URL(string: effective) ?? url
    }
}
