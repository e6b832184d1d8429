import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Supplies request body bytes to curl's read callback — from memory, or streamed from files — and
/// rewinds when curl asks (a resent body after a 307, or a retry on a dead pooled connection).
/// Used on the engine's context only.
///
/// A body is a list of pieces (one for ``RequestBody/data(_:)`` and ``RequestBody/file(_:)``, several
/// for ``RequestBody/parts(_:)``). Its length is fixed when the source is made, because curl
/// announces it as `Content-Length` before the first byte. Each file is checked then (it exists, is
/// readable, and still has the size its region was made for), but opened for reading only when the
/// body reaches it, and closed when the body moves on: a form of a thousand files holds one
/// descriptor at a time. A file that ends before its region does while it is read fails the
/// transfer with ``TransferError/Code/requestBodyFileChanged``: curl would otherwise send a body
/// shorter than announced and wait for the server, which waits for the rest.
struct RequestBodySource {
    private enum Piece {
        case memory(Data)
        case file(RequestBody.FileRegion)

        var length: Int64 {
            switch self {
            case .memory(let data): return Int64(data.count)
            case .file(let region): return region.length
            }
        }
    }

    private let pieces: [Piece]
    /// Where each piece starts in the body.
    private let starts: [Int64]
    /// The producer of a streamed body (then there are no pieces).
    let stream: RequestBodyStream?
    /// The body's length in bytes; `nil` for a stream of unknown length (sent chunked).
    let length: Int64?
    /// The next byte to hand out.
    private(set) var offset: Int64 = 0
    /// The piece `offset` is in.
    private var index = 0
    /// The file piece that is open for reading, if any.
    private var openFile: (index: Int, descriptor: Int32)?

    /// Measures the body and checks its files.
    /// - Throws: ``TransferError/Code/cannotOpenFile`` when a file cannot be opened or measured, or
    ///   a region is invalid; ``TransferError/Code/requestBodyFileChanged`` when a file no longer has
    ///   the size its region was made for.
    init(_ body: RequestBody) throws(TransferError) {
        let pieces: [Piece]
        switch body {
        case .stream(let stream):
            self.pieces = []
            self.starts = []
            self.stream = stream
            self.length = stream.length
            return
        case .data(let data):
            pieces = [.memory(data)]
        case .file(let url):
            let size = try Self.checkFile(at: url.path)
            pieces = [.file(RequestBody.FileRegion(url: url, offset: 0, length: size))]
        case .parts(let parts):
            pieces = try parts.map { (part) throws(TransferError) -> Piece in
                switch part {
                case .data(let data):
                    return .memory(data)
                case .file(let region):
                    try Self.check(region)
                    return .file(region)
                }
            }
        }
        var starts: [Int64] = []
        starts.reserveCapacity(pieces.count)
        var total: Int64 = 0
        for piece in pieces {
            starts.append(total)
            total += piece.length
        }
        self.pieces = pieces
        self.starts = starts
        self.stream = nil
        self.length = total
    }

    /// Copies up to `buffer.count` bytes into `buffer`, across pieces; 0 at the end; `nil` when a
    /// stream has nothing yet (curl pauses until it has).
    /// - Throws: ``TransferError/Code/cannotOpenFile`` when a file cannot be opened or read;
    ///   ``TransferError/Code/requestBodyFileChanged`` when a file changed size or ended early, or a
    ///   stream ended before (or went on past) its announced length; a stream's own failure.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TransferError) -> Int? {
        if let stream = self.stream { return try self.read(from: stream, into: buffer) }
        guard let base = buffer.baseAddress, let length = self.length else { return 0 }
        var copied = 0
        while copied < buffer.count && self.offset < length {
            while self.index < self.pieces.count - 1 && self.offset >= self.starts[self.index] + self.pieces[self.index].length {
                self.index += 1
            }
            let within = self.offset - self.starts[self.index]
            let wanted = Int(min(Int64(buffer.count - copied), self.pieces[self.index].length - within))
            let destination = base + copied
            switch self.pieces[self.index] {
            case .memory(let data):
                let start = data.startIndex + Int(within)
                data.copyBytes(to: destination.assumingMemoryBound(to: UInt8.self), from: start..<(start + wanted))
                self.advance(by: wanted, copied: &copied)
            case .file(let region):
                let descriptor = try self.descriptor(for: self.index, region)
                let count = pread(descriptor, destination, wanted, off_t(region.offset + within))
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else {
                    throw TransferError(.cannotOpenFile, "Cannot read \(region.url.path): \(ResponseBodySink.lastError())")
                }
                guard count > 0 else {
                    throw TransferError(.requestBodyFileChanged,
                                        "\(region.url.path) ended \(region.length - within) bytes before the body announced.")
                }
                self.advance(by: count, copied: &copied)
            }
        }
        return copied
    }

    private mutating func advance(by count: Int, copied: inout Int) {
        self.offset += Int64(count)
        copied += count
    }

    private mutating func read(from stream: RequestBodyStream, into buffer: UnsafeMutableRawBufferPointer) throws(TransferError) -> Int? {
        switch stream.read(into: buffer) {
        case .copied(let count, _):
            self.offset += Int64(count)
            if let length = self.length, self.offset > length {
                throw TransferError(.requestBodyFileChanged,
                                    "The request body's sequence went on past the \(length) bytes announced.")
            }
            return count
        case .pause:
            return nil
        case .end:
            if let length = self.length, self.offset < length {
                throw TransferError(.requestBodyFileChanged,
                                    "The request body's sequence ended \(length - self.offset) bytes before the length announced.")
            }
            return 0
        case .fail(let error):
            throw error
        }
    }

    /// Moves to `offset`; `false` when it is outside the body, or the body is a stream that has
    /// already handed out bytes (it cannot be read again).
    mutating func seek(to offset: Int64) -> Bool {
        if self.stream != nil { return offset == 0 && self.offset == 0 }
        guard let length = self.length, offset >= 0 && offset <= length else { return false }
        self.offset = offset
        // The last piece starting at or before `offset` (empty pieces are skipped by `read`).
        var low = 0
        var high = self.starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if self.starts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        self.index = max(0, low)
        return true
    }

    /// Releases the open file, if any.
    mutating func close() {
        if let open = self.openFile {
            Glibc.close(open.descriptor)
            self.openFile = nil
        }
    }

    // MARK: Files

    /// The descriptor of piece `index`, opening it (and closing the previous one) when needed.
    private mutating func descriptor(for index: Int, _ region: RequestBody.FileRegion) throws(TransferError) -> Int32 {
        if let open = self.openFile, open.index == index { return open.descriptor }
        self.close()
        let descriptor = open(region.url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TransferError(.cannotOpenFile, "Cannot open \(region.url.path): \(ResponseBodySink.lastError())")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = ResponseBodySink.lastError()
            Glibc.close(descriptor)
            throw TransferError(.cannotOpenFile, "Cannot stat \(region.url.path): \(reason)")
        }
        do {
            try Self.check(region, size: Int64(info.st_size))
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        self.openFile = (index, descriptor)
        return descriptor
    }

    /// Checks that `region` fits its file and the file has the size the region was made for.
    private static func check(_ region: RequestBody.FileRegion) throws(TransferError) {
        guard region.offset >= 0, region.length >= 0 else {
            throw TransferError(.cannotOpenFile, "Invalid region of \(region.url.path): offset \(region.offset), length \(region.length).")
        }
        try Self.check(region, size: Self.checkFile(at: region.url.path))
    }

    private static func check(_ region: RequestBody.FileRegion, size: Int64) throws(TransferError) {
        if let expected = region.fileSize, expected != size {
            throw TransferError(.requestBodyFileChanged,
                                "\(region.url.path) has \(size) bytes, not the \(expected) it had when the body was made.")
        }
        guard region.offset + region.length <= size else {
            throw TransferError(.requestBodyFileChanged,
                                "\(region.url.path) has \(size) bytes, fewer than the region \(region.offset)+\(region.length).")
        }
    }

    /// Opens the file at `path` to check that it can be read, and returns its size.
    private static func checkFile(at path: String) throws(TransferError) -> Int64 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TransferError(.cannotOpenFile, "Cannot open \(path): \(ResponseBodySink.lastError())")
        }
        defer { Glibc.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw TransferError(.cannotOpenFile, "Cannot stat \(path): \(ResponseBodySink.lastError())")
        }
        return Int64(info.st_size)
    }
}
