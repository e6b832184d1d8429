import CurlewTransport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The files of an ``HTTPCache`` kept in a directory: one file per entry, `<16 hex digits>.entry`,
/// holding a magic number, the length of the entry's metadata, the metadata (``CachedResponse`` as
/// JSON) and the body.
///
/// Files are written whole under a temporary name and renamed into place, so a reader never sees
/// half an entry; files are private to their owner (mode `0600`; a directory created here gets
/// `0700`). A file that is not what it should be — truncated, another format, metadata that does
/// not decode or does not match the index — is a miss and is removed, never a crash. Only files
/// with these names are ever read or removed: the directory may hold others.
struct CacheDirectory: Sendable {
    /// The directory.
    let url: URL

    private static let magic = Array("CURLEWC1".utf8)
    private static let headerSize = 12
    /// The largest metadata read: far above what a response head within curl's limits encodes to.
    static let maximumMetadataSize = 1 << 20

    /// Opens `url`, creating it (mode `0700`) when missing.
    ///
    /// - Throws: `TransferError` with `TransferError/Code/cannotWriteToFile` when it cannot be
    ///   created or is not a directory.
    init(url: URL) throws(TransferError) {
        self.url = url.standardizedFileURL
        do {
            try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw TransferError(.cannotWriteToFile, "Cannot create the cache directory \(self.url.path): \(error)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: self.url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TransferError(.cannotWriteToFile, "\(self.url.path) is not a directory.")
        }
    }

    /// The entries found in the directory, oldest first: the `maximumEntries` most recently written
    /// entry files that read back whole. Older entry files, unreadable ones and leftover temporary
    /// files are removed. Reads the metadata of at most `maximumEntries` files.
    func loadRecords(maximumEntries: Int) -> [CacheIndex.Record] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: self.url.path)) ?? []
        var files: [(id: UInt64, modified: Int)] = []
        for name in names {
            if name.hasSuffix(".tmp"), Self.id(of: name, suffix: ".tmp") != nil {
                unlink(self.path(name))
            } else if let id = Self.id(of: name, suffix: ".entry") {
                var info = stat()
                guard lstat(self.path(name), &info) == 0 else { continue }
                files.append((id, info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec))
            }
        }
        files.sort { $0.modified < $1.modified }
        for old in files.dropLast(max(0, maximumEntries)) { self.remove(old.id) }
        return files.suffix(max(0, maximumEntries)).compactMap { file in
            guard let entry = self.read(file.id, body: false)?.entry else {
                self.remove(file.id)
                return nil
            }
            return CacheIndex.Record(id: file.id, entry: entry)
        }
    }

    /// Writes `record` with `body` (atomically); `false` when it could not be written.
    func write(_ record: CacheIndex.Record, body: Data) -> Bool {
        guard let metadata = try? JSONEncoder().encode(record.entry), metadata.count <= Self.maximumMetadataSize else {
            return false
        }
        var bytes = Self.magic
        let length = UInt32(metadata.count)
        bytes += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        bytes += metadata
        bytes += body
        let temporary = self.path(Self.name(record.id, suffix: ".tmp"))
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return false }
        var offset = 0
        var failed = false
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                failed = true
                break
            }
            offset += written
        }
        if close(descriptor) != 0 { failed = true }
        guard !failed, rename(temporary, self.path(Self.name(record.id, suffix: ".entry"))) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// The body of `record`, when its file is whole and holds that entry; otherwise the file is
    /// removed and the result is `nil`.
    func body(of record: CacheIndex.Record) -> Data? {
        guard let stored = self.read(record.id, body: true), stored.entry == record.entry, let body = stored.body else {
            self.remove(record.id)
            return nil
        }
        return body
    }

    /// Removes the file of entry `id`, if any.
    func remove(_ id: UInt64) {
        unlink(self.path(Self.name(id, suffix: ".entry")))
    }

    /// Reads the entry file of `id`: its metadata, and its body when asked.
    private func read(_ id: UInt64, body readsBody: Bool) -> (entry: CachedResponse, body: Data?)? {
        let descriptor = open(self.path(Self.name(id, suffix: ".entry")), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let size = Int(info.st_size)
        guard size >= Self.headerSize, let header = Self.read(descriptor, count: Self.headerSize),
              Array(header.prefix(8)) == Self.magic else { return nil }
        let length = header[8...].reduce(0) { $0 << 8 | Int($1) }
        guard length <= Self.maximumMetadataSize, Self.headerSize + length <= size,
              let metadata = Self.read(descriptor, count: length),
              let entry = try? JSONDecoder().decode(CachedResponse.self, from: metadata),
              size - Self.headerSize - length == entry.bodyLength else {
            return nil
        }
        guard readsBody else { return (entry, nil) }
        guard let body = Self.read(descriptor, count: entry.bodyLength) else { return nil }
        return (entry, body)
    }

    /// Exactly `count` bytes from `descriptor`, or `nil`.
    private static func read(_ descriptor: Int32, count: Int) -> Data? {
        var data = Data(count: count)
        var offset = 0
        while offset < count {
            let got = data.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress.map { $0 + offset }, count - offset) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
            offset += got
        }
        return data
    }

    private func path(_ name: String) -> String {
        self.url.path + "/" + name
    }

    /// `<16 hex digits><suffix>`.
    static func name(_ id: UInt64, suffix: String) -> String {
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + suffix
    }

    /// The id of a file named by ``name(_:suffix:)``, or `nil` for any other name.
    static func id(of name: String, suffix: String) -> UInt64? {
        guard name.hasSuffix(suffix) else { return nil }
        let hex = name.dropLast(suffix.count)
        guard hex.count == 16, hex.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            return nil
        }
        return UInt64(hex, radix: 16)
    }
}
