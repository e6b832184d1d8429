import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension Transfer {
    /// Cancels the transfer as ``cancel()`` does, keeping what a download to a file received so far
    /// for a later transfer (see ``ResumeData``).
    ///
    /// `completion` gets resume data when the transfer runs or is paused, downloads to a file with
    /// a GET, has kept some body, and its response has a strong validator and no content coding (what
    /// a range request needs); the partial file then stays beside the destination instead of being
    /// removed. Otherwise it gets `nil` and the transfer is simply cancelled. It runs once, on the
    /// engine's context, after the delegate heard the cancellation.
    ///
    /// - Parameter completion: Receives the resume data, or `nil`.
    public func cancel(producingResumeData completion: @escaping @Sendable (ResumeData?) -> Void) {
        // On the context (from a delegate call, inside curl's callbacks), body delivery stops at once,
        // as for `cancel()`: the next chunk is held, not written, and the queued block ends the job.
        if self.driver.scheduler.isOnContext { self.machine.haltRequested(cancellingWith: nil) }
        self.onContext { transfer in
            let data = transfer.keepResumeData()
            transfer.contextCancel(TransferError.cancelled(url: transfer.currentURL))
            completion(data)
        }
    }

    /// Detaches the partial file from the sink and describes it, when the body so far can be continued.
    private func keepResumeData() -> ResumeData? {
        switch self.machine.state {
        case .running, .paused: break
        case .idle, .finished: return nil
        }
        guard case .file(let destination) = self.request.destination, self.attempt?.method == .get,
              let head = self.deliveredHead, let validator = ResumeValidator(head), let url = self.currentURL,
              let count = self.sink?.count, count > 0, let kept = self.sink?.keepPartialFile() else {
            return nil
        }
        return ResumeData(url: url, destination: destination, partialFile: URL(fileURLWithPath: kept.path),
                          bytesKept: kept.count, validator: validator, responseHead: head)
    }

    /// Makes a starting transfer continue its resume data, when the data applies
    /// (``ResumeData/continuation(for:)``) and its partial file still holds what it recorded: the
    /// sink becomes that file, and the first attempt asks for the rest with a range request.
    /// Otherwise the transfer keeps its new sink and starts over; resume data for this destination
    /// that cannot be used has its partial file removed.
    func continueFromResumeData() {
        guard let data = self.resumeData, case .file(let destination) = self.request.destination else { return }
        self.resumeData = nil
        guard let continuation = data.continuation(for: self.request),
              let continuing = try? ResponseBodySink(continuing: continuation.partialPath, count: continuation.offset,
                                                     destination: destination) else {
            if data.belongsToDestination,
               destination.standardizedFileURL.path == data.destination.standardizedFileURL.path {
                unlink(data.partialFile.standardizedFileURL.path)
            }
            return
        }
        self.sink?.discard()
        self.sink = continuing
        self.deliveredHead = data.responseHead
        self.progress.bytesReceived = continuation.offset
        if data.responseHead.headerFields[.contentEncoding] == nil {
            self.progress.expectedBytesToReceive = data.responseHead.headerFields[.contentLength].flatMap { Int64($0) }
        }
        self.attempt?.resume = ResumeRequest(offset: continuation.offset, validator: continuation.validator)
    }
}

extension TransferEngine {
    /// Makes a transfer for `request` that continues the download `data` describes, when it can:
    /// `request` must be a GET of ``ResumeData/url`` into ``ResumeData/destination`` (typically
    /// `TransferRequest(url: data.url, destination: .file(data.destination))`, with any headers and
    /// options). Nothing happens until ``Transfer/start()``.
    ///
    /// The first request asks for the bytes past ``ResumeData/bytesKept`` with `Range` and
    /// `If-Range`; a 206 for the same entity from that offset is appended to the partial file, and
    /// anything else — another entity, a full 200, a 416, resume data that does not match `request`
    /// or whose partial file is gone — makes the transfer start over, so the destination always
    /// ends byte-identical to the server's current entity. The response delivered is the one the
    /// body belongs to: the head in the resume data when the body was continued. The delegate
    /// hears ``TransferDelegate/transfer(_:didReceive:)`` only for a response that starts the body anew.
    ///
    /// - Parameters:
    ///   - request: A GET of the resume data's URL into its destination.
    ///   - data: Resume data from ``Transfer/cancel(producingResumeData:)``, in this process or another.
    ///   - delegate: Hears the transfer's events on the engine's context.
    /// - Returns: The transfer, not started.
    public func makeTransfer(_ request: TransferRequest, resumingFrom data: ResumeData,
                             delegate: (any TransferDelegate)? = nil) -> Transfer {
        let transfer = self.makeTransfer(request, delegate: delegate)
        // Set before the transfer is handed out, so before anything reaches its context.
        transfer.resumeData = data
        return transfer
    }
}
