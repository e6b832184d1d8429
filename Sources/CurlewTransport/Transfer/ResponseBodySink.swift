import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a transfer writes response body bytes: memory, a consumer's stream, or a temporary file that
/// replaces the destination only when the response is one to keep (``finish(replacingFile:)``). Used
/// on the engine's context only.
///
/// A body in memory starts as `Data`; from ``mappingThreshold`` bytes on (known from
/// `Content-Length`, or reached while writing) it moves to pages of its own (``PageBuffer``),
/// handed over without a copy and unmapped when the last `Data` referring to them goes. Large
/// bodies never pass through `malloc`: glibc would raise its mmap threshold after the first large
/// free and then keep every later body's memory in the arena of the thread that allocated it —
/// with the dispatch backend's changing worker threads and the operation path's queues, 16 MiB
/// GETs one at a time peaked at 148 MiB resident instead of 48.
struct ResponseBodySink {
    private enum Storage {
        case memory(Data)
        case mapped(PageBuffer)
        case file(descriptor: Int32, temporaryPath: String, destination: URL)
        case stream(ResponseBodyStream)
        case closed
    }

    /// The body size from which memory bodies live in pages of their own.
    static let mappingThreshold = 1 << 20

    private var storage: Storage
    /// Bytes held so far.
    private(set) var count: Int64 = 0

    /// Opens the sink for `destination`.
    /// - Throws: ``TransferError/Code/cannotWriteToFile`` when the temporary file cannot be created.
    init(_ destination: ResponseDestination) throws(TransferError) {
        switch destination {
        case .memory:
            self.storage = .memory(Data())
        case .file(let url):
            let directory = url.deletingLastPathComponent().path
            let name = ".\(url.lastPathComponent).curlew-\(UInt32.random(in: .min ... .max)).partial"
            let temporaryPath = (directory.isEmpty ? "." : directory) + "/" + name
            // Read and write: an error response's first bytes are read back (`finish(replacingFile: false)`).
            let descriptor = open(temporaryPath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw TransferError(.cannotWriteToFile, "Cannot create \(temporaryPath): \(Self.lastError())")
            }
            self.storage = .file(descriptor: descriptor, temporaryPath: temporaryPath, destination: url)
        case .stream(let stream):
            self.storage = .stream(stream)
        }
    }

    /// Opens the partial file of an earlier download to `destination` (see ``ResumeData``) to
    /// continue it: bytes past `count` are cut off and writing continues from there.
    /// - Throws: ``TransferError/Code/cannotOpenFile`` when the file is not there, is not a
    ///   regular file, or holds fewer than `count` bytes.
    init(continuing partialPath: String, count: Int64, destination: URL) throws(TransferError) {
        let descriptor = open(partialPath, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw TransferError(.cannotOpenFile, "Cannot open \(partialPath): \(Self.lastError())")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size) >= count,
              ftruncate(descriptor, off_t(count)) == 0, lseek(descriptor, off_t(count), SEEK_SET) == count else {
            close(descriptor)
            throw TransferError(.cannotOpenFile, "\(partialPath) does not hold the \(count) bytes to continue from.")
        }
        self.storage = .file(descriptor: descriptor, temporaryPath: partialPath, destination: destination)
        self.count = count
    }

    /// Reserves memory for a body of known length (memory sinks only; capped, a hint not a promise).
    mutating func reserve(_ length: Int64) {
        guard case .memory(var data) = self.storage, length > 0 else { return }
        self.storage = .closed  // Release the reference so `data` is uniquely held while it grows.
        let capacity = Int(min(length, 64 << 20)) + data.count
        if capacity >= Self.mappingThreshold, let pages = PageBuffer(capacity: capacity, copying: data) {
            self.storage = .mapped(pages)
            return
        }
        data.reserveCapacity(capacity)
        self.storage = .memory(data)
    }

    /// Appends bytes; `false` when a stream's consumer is behind and the bytes were not taken (the
    /// transfer pauses and offers them again).
    /// - Throws: ``TransferError/Code/cannotWriteToFile`` when the file write fails (disk full…).
    @discardableResult
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(TransferError) -> Bool {
        switch self.storage {
        case .stream(let stream):
            guard stream.offer(bytes) else { return false }
        case .memory(var data):
            self.storage = .closed
            if data.count + bytes.count >= Self.mappingThreshold,
               let pages = PageBuffer(capacity: 2 * (data.count + bytes.count), copying: data) {
                pages.append(bytes)
                self.storage = .mapped(pages)
            } else {
                data.append(bytes.assumingMemoryBound(to: UInt8.self))
                self.storage = .memory(data)
            }
        case .mapped(let pages):
            guard pages.append(bytes) else {
                throw TransferError(.responseTooLarge, "Cannot map memory for a \(pages.count + bytes.count)-byte body.")
            }
        case .file(let descriptor, let path, _):
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw TransferError(.cannotWriteToFile, "Cannot write to \(path): \(Self.lastError())")
                }
                offset += written
            }
        case .closed:
            throw TransferError(.cannotWriteToFile, "The response body sink is closed.")
        }
        self.count += Int64(bytes.count)
        return true
    }

    /// Drops everything written so far (a resumed transfer that must restart).
    /// - Throws: ``TransferError/Code/cannotWriteToFile`` when a file cannot be truncated, or bytes
    ///   were already handed to a stream's consumer (they cannot be taken back).
    mutating func truncate() throws(TransferError) {
        switch self.storage {
        case .stream:
            guard self.count == 0 else {
                throw TransferError(.cannotWriteToFile, "A streamed response body cannot start over: \(self.count) bytes were delivered.")
            }
        case .memory(var data):
            self.storage = .closed
            data.removeAll(keepingCapacity: true)
            self.storage = .memory(data)
        case .mapped(let pages):
            pages.removeAll()
        case .file(let descriptor, let path, _):
            guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else {
                throw TransferError(.cannotWriteToFile, "Cannot truncate \(path): \(Self.lastError())")
            }
        case .closed:
            break
        }
        self.count = 0
    }

    /// Completes the sink: the memory body, or the file. With `replacingFile` the temporary file
    /// replaces the destination; without, the destination is left as it was, the temporary file is
    /// removed, and its first ``ResponseDestination/retainedErrorBodySize`` bytes are the body.
    mutating func finish(replacingFile: Bool = true) throws(TransferError) -> (body: Data?, fileURL: URL?) {
        let storage = self.storage
        self.storage = .closed
        switch storage {
        case .memory(let data):
            return (data, nil)
        case .stream:
            return (nil, nil)
        case .mapped(let pages):
            return (pages.handOver(), nil)
        case .file(let descriptor, let temporaryPath, _) where !replacingFile:
            let retained = Self.prefix(of: descriptor, count: Int(min(self.count, Int64(ResponseDestination.retainedErrorBodySize))))
            close(descriptor)
            unlink(temporaryPath)
            return (retained, nil)
        case .file(let descriptor, let temporaryPath, let destination):
            let closed = close(descriptor) == 0
            guard closed, rename(temporaryPath, destination.path) == 0 else {
                let reason = Self.lastError()
                unlink(temporaryPath)
                throw TransferError(.cannotWriteToFile, "Cannot move the body to \(destination.path): \(reason)")
            }
            return (nil, destination)
        case .closed:
            return (nil, nil)
        }
    }

    /// Closes a file sink without removing its temporary file, which keeps the body so far for a
    /// later transfer (``ResumeData``); returns the file's path and length. `nil` for a memory sink.
    mutating func keepPartialFile() -> (path: String, count: Int64)? {
        guard case .file(let descriptor, let temporaryPath, _) = self.storage else { return nil }
        self.storage = .closed
        let synced = fsync(descriptor) == 0
        guard close(descriptor) == 0, synced else {
            unlink(temporaryPath)
            return nil
        }
        return (temporaryPath, self.count)
    }

    /// Abandons the sink: a failed or cancelled transfer leaves no file behind.
    mutating func discard() {
        if case .file(let descriptor, let temporaryPath, _) = self.storage {
            close(descriptor)
            unlink(temporaryPath)
        }
        self.storage = .closed
    }

    /// The first `count` bytes of the file open at `descriptor` (fewer if reading fails: they only
    /// show what an error response said).
    private static func prefix(of descriptor: Int32, count: Int) -> Data {
        var data = Data(count: count)
        let read = data.withUnsafeMutableBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var offset = 0
            while offset < count {
                let result = pread(descriptor, base + offset, count - offset, off_t(offset))
                if result < 0 && errno == EINTR { continue }
                guard result > 0 else { break }
                offset += result
            }
            return offset
        }
        return data.prefix(read)
    }

    static func lastError() -> String {
        String(cString: strerror(errno))
    }
}
