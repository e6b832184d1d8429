import CurlewSerialization
import CurlewTransport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a ``RequestOperation`` whose request streams its body to a file keeps that body until the
/// operation succeeds: a file of its own beside the destination, which the transfer writes (through
/// its own temporary file) instead of the destination. Only when the response serializer accepted
/// the response is it renamed onto the destination; on any failure it is removed. So the
/// destination holds either its old bytes or the whole validated body, never an error page, a
/// body the serializer refused, or part of one.
struct DownloadStaging: Sendable, Hashable {
    /// The file the caller asked for.
    let destination: URL
    /// The operation's file beside it (a hidden name of its own in the same directory, so that the
    /// rename stays on one file system).
    let staged: URL

    init(destination: URL) {
        self.destination = destination
        let name = ".\(destination.lastPathComponent).curlew-\(UInt32.random(in: .min ... .max)).staged"
        self.staged = destination.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// `request` as the transport runs it: its body to the staged file, replaced there only for the
    /// statuses `serializer` accepts when it validates statuses (the request's own otherwise).
    func request(for request: TransferRequest, serializer: any ResponseSerializer) -> TransferRequest {
        var staged = request
        staged.destination = .file(self.staged)
        if let validating = serializer as? any ValidatingResponseSerializer {
            staged.options.fileReplacementStatusCodes = validating.acceptableStatusCodes
        }
        return staged
    }

    /// Moves the staged file onto the destination (atomically: `rename`).
    ///
    /// - Throws: `TransferError` with `TransferError/Code/cannotWriteToFile` when it cannot; the
    ///   staged file is removed then, and the destination is as it was.
    func commit() throws(TransferError) {
        guard rename(self.staged.path, self.destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            self.discard()
            throw TransferError(.cannotWriteToFile, "Cannot move the body to \(self.destination.path): \(reason)")
        }
    }

    /// Removes the staged file, if there is one.
    func discard() {
        unlink(self.staged.path)
    }
}
