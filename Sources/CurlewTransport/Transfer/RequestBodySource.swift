import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Supplies request body bytes to curl's read callback, from memory or streamed from a file, and
/// rewinds when curl asks (a resent body after a 307, or a retry on a dead pooled connection).
/// Used on the engine's context only.
struct RequestBodySource {
    private enum Storage {
        case memory(Data)
        case file(descriptor: Int32, path: String)
    }

    private var storage: Storage
    /// The body's length in bytes.
    let length: Int64
    /// The next byte to hand out.
    private(set) var offset: Int64 = 0

    /// Opens the body.
    /// - Throws: ``TransferError/Code/cannotOpenFile`` when the file cannot be opened or measured.
    init(_ body: RequestBody) throws(TransferError) {
        switch body {
        case .data(let data):
            self.storage = .memory(data)
            self.length = Int64(data.count)
        case .file(let url):
            let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw TransferError(.cannotOpenFile, "Cannot open \(url.path): \(ResponseBodySink.lastError())")
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else {
                let reason = ResponseBodySink.lastError()
                Glibc.close(descriptor)
                throw TransferError(.cannotOpenFile, "Cannot stat \(url.path): \(reason)")
            }
            self.storage = .file(descriptor: descriptor, path: url.path)
            self.length = Int64(info.st_size)
        }
    }

    /// Copies up to `buffer.count` bytes into `buffer`; 0 at the end.
    /// - Throws: ``TransferError/Code/cannotOpenFile`` when the file read fails.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TransferError) -> Int {
        let wanted = Int(min(Int64(buffer.count), self.length - self.offset))
        guard wanted > 0, let base = buffer.baseAddress else { return 0 }
        switch self.storage {
        case .memory(let data):
            let start = data.startIndex + Int(self.offset)
            data.copyBytes(to: base.assumingMemoryBound(to: UInt8.self), from: start..<(start + wanted))
            self.offset += Int64(wanted)
            return wanted
        case .file(let descriptor, let path):
            while true {
                let count = pread(descriptor, base, wanted, off_t(self.offset))
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else {
                    throw TransferError(.cannotOpenFile, "Cannot read \(path): \(ResponseBodySink.lastError())")
                }
                self.offset += Int64(count)
                return count
            }
        }
    }

    /// Moves to `offset`; `false` when it is outside the body.
    mutating func seek(to offset: Int64) -> Bool {
        guard offset >= 0 && offset <= self.length else { return false }
        self.offset = offset
        return true
    }

    /// Releases the file, if any.
    func close() {
        if case .file(let descriptor, _) = self.storage {
            Glibc.close(descriptor)
        }
    }
}
