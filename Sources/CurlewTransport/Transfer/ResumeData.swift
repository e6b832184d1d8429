import Foundation
import HTTPTypes

/// What a file download needs to continue later — in another engine, another process, after a
/// restart — instead of starting over: the URL, the response's strong validator, and the bytes
/// already kept in the temporary file beside the destination.
///
/// ``Transfer/cancel(producingResumeData:)`` makes it from a running or paused download to a file;
/// it is `Codable`, so it can be written anywhere (it holds no body bytes, only the facts and the
/// partial file's name). A transfer made with ``TransferEngine/makeTransfer(_:resumingFrom:delegate:)``
/// then asks for the rest with `Range` and `If-Range`, checks that a 206 is for the same entity from
/// the right offset, and appends it: the destination ends byte-identical to a download in one go.
/// When the server's entity changed, or it ignores the range, or the partial file is gone or
/// shorter than recorded, the transfer starts over cleanly (the partial file is replaced).
///
/// ```swift
/// transfer.cancel(producingResumeData: { data in
///     if let data { try? JSONEncoder().encode(data).write(to: resumeFile) }
/// })
/// // Later, anywhere:
/// let data = try JSONDecoder().decode(ResumeData.self, from: Data(contentsOf: resumeFile))
/// let request = TransferRequest(url: data.url, destination: .file(data.destination))
/// engine.makeTransfer(request, resumingFrom: data, delegate: delegate).start()
/// ```
///
/// Until it is used, the partial file stays beside the destination (a hidden
/// `.<name>.curlew-<n>.partial`); a transfer that resumes from it and then fails or is cancelled
/// removes it, as any download does with its temporary file.
public struct ResumeData: Sendable, Hashable, Codable {
    /// The URL the download came from (after redirects): the one to ask for the rest.
    public var url: URL
    /// The file the download is for.
    public var destination: URL
    /// The temporary file beside ``destination`` holding the first ``bytesKept`` bytes of the body.
    public var partialFile: URL
    /// How many body bytes the partial file holds.
    public var bytesKept: Int64
    /// The response's strong `ETag`, when it had one (sent as `If-Range`).
    public var entityTag: String?
    /// The response's `Last-Modified`, when it had one (sent as `If-Range` without an `ETag`).
    public var lastModified: String?
    /// The head of the response the body belongs to: what a resumed transfer delivers.
    public var responseHead: HTTPResponse

    init(url: URL, destination: URL, partialFile: URL, bytesKept: Int64, validator: ResumeValidator, responseHead: HTTPResponse) {
        self.url = url
        self.destination = destination
        self.partialFile = partialFile
        self.bytesKept = bytesKept
        self.entityTag = validator.entityTag
        self.lastModified = validator.lastModified
        self.responseHead = responseHead
    }
}

extension ResumeData {
    /// How a transfer for `request` continues from the data: the partial file, where to continue
    /// in it, and the validator. No I/O.
    struct Continuation: Hashable {
        var partialPath: String
        var offset: Int64
        var validator: ResumeValidator
    }

    /// The continuation of `request` from this data, or `nil` when the data does not apply and the
    /// transfer starts over: not a GET to the same URL into the same file, nothing kept, a partial
    /// file that is not the destination's own temporary file (a name Curlew would not have made, or
    /// another directory — resume data read from disk is not trusted to name any file), a request
    /// with a `Range` of its own, or a response head without the recorded strong validator.
    func continuation(for request: TransferRequest) -> Continuation? {
        guard request.head.method == .get, request.head.headerFields[.range] == nil,
              case .file(let destination) = request.destination,
              destination.standardizedFileURL.path == self.destination.standardizedFileURL.path,
              request.url?.absoluteString == self.url.absoluteString,
              self.bytesKept > 0,
              self.belongsToDestination,
              let validator = ResumeValidator(self.responseHead),
              validator.entityTag == self.entityTag, validator.lastModified == self.lastModified else {
            return nil
        }
        return Continuation(partialPath: self.partialFile.standardizedFileURL.path, offset: self.bytesKept, validator: validator)
    }

    /// Whether ``partialFile`` is a temporary file of ``destination``'s, as ``ResponseBodySink``
    /// names them: `.<destination name>.curlew-<digits>.partial`, in the same directory.
    var belongsToDestination: Bool {
        let partial = self.partialFile.standardizedFileURL
        let destination = self.destination.standardizedFileURL
        guard partial.isFileURL, destination.isFileURL,
              partial.deletingLastPathComponent().path == destination.deletingLastPathComponent().path else {
            return false
        }
        let prefix = ".\(destination.lastPathComponent).curlew-"
        let name = partial.lastPathComponent
        guard name.hasPrefix(prefix), name.hasSuffix(".partial") else { return false }
        let number = name.dropFirst(prefix.count).dropLast(".partial".count)
        return !number.isEmpty && number.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
